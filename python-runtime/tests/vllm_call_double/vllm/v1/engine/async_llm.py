"""Double of vllm.v1.engine.async_llm.AsyncLLM (0.30.0): the methods Hangar calls,
with the release's signatures. It checks what it is given (a TokensPrompt, a
SamplingParams asking for DELTA outputs) and yields deltas of a counter: "t0 ",
"t1 ", ... It proves well-formed calls only, nothing about GPUs or vLLM.

Every call is recorded in a JSON-lines file named by HANGAR_VLLM_DOUBLE_LOG, when
set, so a test in another process can see what the runtime called."""

import asyncio
import json
import os
from pathlib import Path
from collections.abc import AsyncGenerator, Iterable

from vllm.engine.arg_utils import AsyncEngineArgs
from vllm.exceptions import VLLMValidationError
from vllm.outputs import CompletionOutput, Logprob, RequestOutput
from vllm.sampling_params import RequestOutputKind, SamplingParams

_STEP_S = 0.002


def _record(event: str, **fields) -> None:
    path = os.environ.get("HANGAR_VLLM_DOUBLE_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"event": event, **fields}) + "\n")


class _ModelConfig:
    """vLLM's ModelConfig, the one field Hangar reads: max_model_len is the launch's, or
    the model's own max_position_embeddings (config.json)."""

    def __init__(self, engine_args: AsyncEngineArgs):
        given = getattr(engine_args, "max_model_len", None)
        if given is None:
            try:
                config = json.loads((Path(engine_args.model) / "config.json").read_text())
                given = int(config.get("max_position_embeddings") or 2048)
            except (OSError, ValueError):
                given = 2048
        self.max_model_len = given
        try:
            self.vocab_size = int(json.loads((Path(engine_args.model) / "config.json").read_text())["vocab_size"])
        except (OSError, ValueError, KeyError):
            self.vocab_size = 32000


# Failure injection, for what real vLLM does only under faults (a KV load failing): the
# last output of every request finishes with this reason ("error" or "abort").
_FINISH_ENV = "HANGAR_VLLM_DOUBLE_FINISH"
# vLLM's processor expands each image placeholder to the image's tokens; here, to 4.
_IMAGE_TOKENS = 4


class AsyncLLM:
    def __init__(self, engine_args: AsyncEngineArgs):
        self.engine_args = engine_args
        self._aborted: set[str] = set()
        self.is_shut_down = False
        self._sleep_level = 0  # 0: awake
        self.model_config = _ModelConfig(engine_args)

    @classmethod
    def from_engine_args(cls, engine_args: AsyncEngineArgs, start_engine_loop: bool = True,
                         usage_context=None, stat_loggers=None) -> "AsyncLLM":
        if not isinstance(engine_args, AsyncEngineArgs):
            raise TypeError(f"engine_args must be AsyncEngineArgs, got {type(engine_args).__name__}")
        # vLLM's MaxLoRARanks: a pydantic Literal, checked when the engine config is built here.
        rank = getattr(engine_args, "max_lora_rank", None)
        if rank is not None and rank not in (1, 8, 16, 32, 64, 128, 256, 320, 512):
            raise ValueError(f"max_lora_rank: Input should be 1, 8, 16, 32, 64, 128, 256, 320 or 512, got {rank!r}")
        _record("from_engine_args", model=engine_args.model,
                enable_sleep_mode=getattr(engine_args, "enable_sleep_mode", False), enable_lora=getattr(engine_args, "enable_lora", False),
                max_loras=getattr(engine_args, "max_loras", None), max_lora_rank=getattr(engine_args, "max_lora_rank", None),
                limit_mm_per_prompt=getattr(engine_args, "limit_mm_per_prompt", None))
        return cls(engine_args)

    async def generate(self, prompt, sampling_params: SamplingParams, request_id: str, *, prompt_text=None,
                       lora_request=None, tokenization_kwargs=None, trace_headers=None, priority: int = 0,
                       data_parallel_rank=None, session_id=None, reasoning_ended=None,
                       reasoning_parser_kwargs=None) -> AsyncGenerator[RequestOutput, None]:
        if self.is_shut_down:
            raise RuntimeError("EngineDeadError: the engine was shut down")
        # vLLM has no weights on the GPU while asleep; the double refuses outright, so a
        # request that reached a sleeping engine fails the test instead of passing unseen.
        if self._sleep_level:
            raise RuntimeError("the engine is sleeping (level %d): wake_up() first" % self._sleep_level)
        if not isinstance(prompt, dict) or not isinstance(prompt.get("prompt_token_ids"), list) \
                or not all(isinstance(i, int) for i in prompt["prompt_token_ids"]):
            raise TypeError(f"expected a TokensPrompt with prompt_token_ids, got {prompt!r}")
        if not isinstance(sampling_params, SamplingParams):
            raise TypeError("sampling_params must be SamplingParams")
        if not isinstance(request_id, str):
            raise TypeError("request_id must be a str")
        if lora_request is not None:
            from vllm.lora.request import LoRARequest

            if not isinstance(lora_request, LoRARequest):
                raise TypeError("lora_request must be a LoRARequest")
            # vLLM's own refusal when the engine was started without LoRA.
            if not getattr(self.engine_args, "enable_lora", False):
                raise ValueError(f"LoRA is not enabled! Got lora_request {lora_request.lora_name}")
        images = (prompt.get("multi_modal_data") or {}).get("image", [])
        images = images if isinstance(images, list) else [images]
        if images:
            from PIL import Image

            if not all(isinstance(i, Image.Image) for i in images):
                raise TypeError("multi_modal_data image must be PIL images")
            # vLLM's own refusal past the launch's limit_mm_per_prompt (1 when not given).
            limit = (getattr(self.engine_args, "limit_mm_per_prompt", None) or {}).get("image", 1)
            if len(images) > limit:
                raise ValueError(f"At most {limit} image(s) may be provided in one prompt.")
        guide = sampling_params.structured_outputs
        _record("generate", images=[list(i.size) for i in images], lora=(lora_request.lora_name, lora_request.lora_int_id, lora_request.lora_path)
                if lora_request is not None else None, request_id=request_id, output_kind=int(sampling_params.output_kind),
                prompt_tokens=len(prompt["prompt_token_ids"]), ignore_eos=sampling_params.ignore_eos,
                stop_token_ids=list(sampling_params.stop_token_ids or []), min_p=sampling_params.min_p,
                min_tokens=sampling_params.min_tokens, prompt_logprobs=sampling_params.prompt_logprobs,
                prompt_token_ids=list(prompt["prompt_token_ids"]),
                guided={k: v for k, v in vars(guide).items() if v not in (None, False)} if guide else None)
        ids = prompt["prompt_token_ids"]
        if len(ids) > self.model_config.max_model_len:
            # vLLM's input processor's refusal (a VLLMValidationError since 0.27).
            raise VLLMValidationError(f"The decoder prompt (length {len(ids)}) is longer than the maximum model "
                                      f"length of {self.model_config.max_model_len}.", parameter="input_tokens")
        past = [t for t in (sampling_params.logit_bias or {}) if not 0 <= t < self.model_config.vocab_size]
        if past:
            # vLLM's processor checks logit_bias against the vocabulary (a VLLMValidationError since 0.27).
            raise VLLMValidationError(f"token_id(s) {past} in logit_bias contain out-of-vocab token ids. "
                                      f"Vocabulary size: {self.model_config.vocab_size}", parameter="logit_bias")
        ids = ids + [0] * ((_IMAGE_TOKENS - 1) * len(images))  # the expanded ids vLLM reports
        forced_finish = os.environ.get(_FINISH_ENV)
        # vLLM's prompt_logprobs, in the first output: None for the first token, then a map
        # holding the prompt's token (rank 3 here) and the `prompt_logprobs` likeliest.
        prompt_logprobs = None
        if sampling_params.prompt_logprobs is not None:
            prompt_logprobs = [None] + [{token: Logprob(-2.0, 3, f"p{token} "),
                                         **{4000 + k: Logprob(-0.5 - k, k + 1, f"top{k} ") for k in range(sampling_params.prompt_logprobs)}}
                                        for token in ids[1:]]
        so_far = ""
        for i in range(sampling_params.max_tokens):
            await asyncio.sleep(_STEP_S)
            if request_id in self._aborted:
                return
            done = i + 1 == sampling_params.max_tokens
            text, token = f"t{i} ", 1000 + i
            # vLLM's stop strings: the text ends before the first one, which is the output's
            # stop_reason, and finish_reason is "stop".
            hits = [(at, s) for s in sampling_params.stop if (at := (so_far + text).find(s)) >= 0]
            if hits:
                at, hit = min(hits, key=lambda h: h[0])
                out = CompletionOutput(0, (so_far + text)[len(so_far):at], [token], None, None, "stop", hit)
                yield RequestOutput(request_id, None, ids, prompt_logprobs if i == 0 else None, [out], True)
                return
            # vLLM's stop token ids: the token ends the output (no text) and is its stop_reason.
            if token in (sampling_params.stop_token_ids or []):
                out = CompletionOutput(0, "", [token], None, None, "stop", token)
                yield RequestOutput(request_id, None, ids, prompt_logprobs if i == 0 else None, [out], True)
                return
            so_far += text
            logprobs = None
            if sampling_params.logprobs is not None:
                alternatives = {token: Logprob(-0.5, 1, text)}
                for k in range(1, sampling_params.logprobs):
                    alternatives[2000 + k] = Logprob(-0.5 - k, k + 1, f"alt{k} ")
                logprobs = [alternatives]
            if sampling_params.output_kind != RequestOutputKind.DELTA:
                raise AssertionError("Hangar asks for DELTA outputs; this double only serves those")
            out = CompletionOutput(0, text, [token], None, logprobs, (forced_finish or "length") if done else None)
            yield RequestOutput(request_id, None, ids, prompt_logprobs if i == 0 else None, [out], done)

    async def abort(self, request_id: str | Iterable[str]) -> None:
        ids = [request_id] if isinstance(request_id, str) else list(request_id)
        self._aborted.update(ids)
        _record("abort", request_ids=ids)

    async def sleep(self, level: int = 1, mode: str = "abort") -> None:
        """0.30's signature: level 1 moves the weights to host memory and drops the KV
        cache; level 2 drops both. `mode` says what becomes of requests in flight."""
        if not getattr(self.engine_args, "enable_sleep_mode", False):
            # vLLM's worker asserts this: sleep needs the allocator that sleep mode sets up.
            raise AssertionError("Sleep mode is not enabled in the model config")
        if level not in (1, 2):
            raise ValueError(f"level must be 1 or 2, got {level!r}")
        if mode not in ("abort", "wait", "keep"):
            raise ValueError(f"mode must be abort, wait or keep, got {mode!r}")
        await asyncio.sleep(_STEP_S)
        self._sleep_level = level
        _record("sleep", level=level, mode=mode)

    async def wake_up(self, tags: list[str] | None = None) -> None:
        if tags is not None and not (isinstance(tags, list) and set(tags) <= {"weights", "kv_cache", "scheduling"}):
            raise ValueError(f"tags must be None or a list of weights, kv_cache, scheduling; got {tags!r}")
        await asyncio.sleep(_STEP_S)
        self._sleep_level = 0
        _record("wake_up", tags=tags)

    async def is_sleeping(self) -> bool:
        return self._sleep_level > 0

    def shutdown(self) -> None:
        self.is_shut_down = True
        _record("shutdown")
