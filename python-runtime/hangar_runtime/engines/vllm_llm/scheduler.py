"""vLLM batches by itself (its own continuous batching and paged KV cache); this
scheduler only bridges it to the runtime's work loop. vLLM's engine is asyncio: it
runs on an event loop in a daemon thread, each request's outputs are put on a
thread-safe queue, and step() — on the work-loop thread, the only one allowed to
touch the sockets — turns what has arrived into CHUNKs and RESULTs, all of one
step in one BATCH frame (batch_calls).

Outputs are deltas (RequestOutputKind.DELTA): each carries only the text and token
ids generated since the previous one, so a long answer costs the same per step as a
short one."""

import asyncio
import queue
import threading
from collections.abc import Callable

from ..base import BatchScheduler, CallSink
from ..transformers_llm.token_bytes import token_text_and_bytes
from ..transformers_llm.tool_calls import parse_hermes, parse_json_calls
from .forced_tools import ForcedToolCall

METHODS = frozenset({"chat", "generate"})
# How long the work loop may block on its inbox while vLLM computes. An output ends
# the wait at once (set_wake); this bounds it for what does not wake the loop: an
# ABORT, which step() looks at.
_IDLE_WAIT_S = 0.005


# vLLM's finish reasons that are no answer (FINISH_REASON_STRINGS): "error" is a failure
# vLLM calls retryable, "abort" one it decided on; either is an ERROR, not a short answer.
_FAILED = {
    "error": "vLLM failed this request (finish_reason \"error\", e.g. its KV cache could not be loaded); try again",
    "abort": "vLLM aborted this request itself (finish_reason \"abort\")",
}


def _client_error(exc: BaseException) -> bool:
    """vLLM's errors the request caused: since 0.27 VLLMValidationError is a VLLMClientError,
    no longer a ValueError (vllm.exceptions); matched by name so no import of vLLM is needed."""
    return any(cls.__name__ in ("VLLMClientError", "VLLMValidationError") for cls in type(exc).__mro__)


class _Call:
    # tool_format: "hermes" or "json" (the model's own calls, parsed at the end), a
    # ForcedToolCall (tool_choice forced by structured outputs), or None (no tools).
    def __init__(self, sink: CallSink, prompt, params, tool_format, top_logprobs: int | None = None,
                 lora_request=None, echo: str = "", first_token: str = "", own_stop_ids: frozenset = frozenset()):
        self.sink, self.prompt, self.params, self.tool_format = sink, prompt, params, tool_format
        self.echo = echo  # generate with echo: the prompt's text, sent before the answer
        self.delivered = False  # an output of vLLM's has come (the first carries the prompt's logprobs)
        self.first_token = first_token  # the prompt's first token's text, which vLLM does not score
        self.own_stop_ids = own_stop_ids  # the request's stop_token_ids (the registration's are the model's end tokens)
        self.lora_request = lora_request  # vLLM's LoRARequest, or None for the base model
        self.top_logprobs = top_logprobs
        self.text = ""  # everything generated so far
        self.sent = 0  # characters of it already sent as CHUNKs
        self.chunked = False  # a CHUNK has been sent
        self.completion_tokens = 0
        self.prompt_tokens = len(prompt["prompt_token_ids"])  # vLLM's count replaces it (_deliver)
        self.logprobs: list[dict] = []  # a non-stream call's, for its RESULT


class VllmScheduler(BatchScheduler):
    methods = METHODS

    def __init__(self, engine, build_call, tokenizer=None):
        self._engine = engine
        # A token's text and own bytes in log-probabilities, as the Transformers engine gives
        # them (token_bytes.py); without it, vLLM's decoded text (U+FFFD for a partial character).
        self._tokenizer = tokenizer
        self._build_call = build_call  # (method, args, kwargs, sink) -> _Call; raises for bad input
        self._outputs: queue.Queue = queue.Queue()
        self._calls: dict[str, _Call] = {}
        self._aborts: list = []  # futures of aborts not yet done, awaited by stop()
        self._wake: Callable[[], None] = lambda: None
        # A wake is on its way and step() has not drained the outputs since: no other is needed.
        self._wake_pending = False
        # Sleep mode (engine.py): while asleep, vLLM holds no weights on the GPU.
        self.asleep = False
        self._loop = asyncio.new_event_loop()
        threading.Thread(target=self._loop.run_forever, name="vllm-loop", daemon=True).start()

    def run(self, coroutine, timeout_s: float):
        """Runs one of the engine's coroutines (sleep, wake_up) on its event loop and
        waits for it: vLLM's engine client belongs to that loop."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=timeout_s)

    def submit(self, method: str, args: list, kwargs: dict, sink: CallSink) -> None:
        if self.asleep:
            # The control plane wakes a sleeping model before it sends it a call.
            raise RuntimeError("the model is asleep (vLLM sleep mode); wake_up must come first")
        try:
            call = self._build_call(method, args, kwargs, sink)
        except Exception as exc:
            # SamplingParams' own refusals are the request's fault: "invalid", as a ValueError.
            if _client_error(exc) and not isinstance(exc, ValueError):
                raise ValueError(str(exc)) from exc
            raise
        request_id = f"hangar-{sink.call_id}"
        self._calls[request_id] = call
        asyncio.run_coroutine_threadsafe(self._consume(request_id, call.prompt, call.params, call.lora_request), self._loop)

    def set_wake(self, wake: Callable[[], None]) -> None:
        self._wake = wake

    async def _consume(self, request_id: str, prompt, params, lora_request=None) -> None:
        try:
            async for output in self._engine.generate(prompt, params, request_id, lora_request=lora_request):
                self._put((request_id, output, None))
        except Exception as exc:  # the engine's failure belongs to this call only
            self._put((request_id, None, exc))

    def _put(self, item: tuple) -> None:
        """Hands an output to the work loop and wakes it, once per drain: without the
        wake, a token that arrives while the loop waits on its inbox would sit there
        until the wait's timeout (up to _IDLE_WAIT_S added to each step's tokens)."""
        self._outputs.put(item)
        if not self._wake_pending:
            self._wake_pending = True
            self._wake()

    def has_work(self) -> bool:
        return bool(self._calls)

    def wait_before_step(self) -> float:
        return 0.0 if not self._outputs.empty() else _IDLE_WAIT_S

    def step(self) -> None:
        for request_id, call in list(self._calls.items()):
            if call.sink.closed:  # aborted by the control plane
                self._abort(request_id)
                del self._calls[request_id]
        # Cleared before the queue is read: an output put after this wakes the loop again.
        self._wake_pending = False
        while True:
            try:
                request_id, output, error = self._outputs.get_nowait()
            except queue.Empty:
                return
            call = self._calls.get(request_id)
            if call is None:
                continue
            if error is not None:
                del self._calls[request_id]
                call.sink.fail(error, "invalid" if _client_error(error) else "internal")
            else:
                self._deliver(request_id, call, output)

    def stop(self, timeout_s: float = 1.0) -> None:
        """Aborts what runs, waits (briefly) for every abort to reach the engine, and
        stops the event loop: the engine is shut down next, and must not see an
        abort after that."""
        for request_id in list(self._calls):
            self._abort(request_id)
        self._calls.clear()
        for future in self._aborts:
            try:
                future.result(timeout=timeout_s)
            except Exception:  # a failed or slow abort must not hold the shutdown
                pass
        self._aborts.clear()
        self._loop.call_soon_threadsafe(self._loop.stop)

    def _abort(self, request_id: str) -> None:
        self._aborts = [f for f in self._aborts if not f.done()]
        self._aborts.append(asyncio.run_coroutine_threadsafe(self._engine.abort(request_id), self._loop))

    def _deliver(self, request_id: str, call: _Call, output) -> None:
        completion = output.outputs[0]
        if not call.delivered and output.prompt_token_ids:
            # vLLM's ids: each image expanded to its tokens, where ours count a placeholder.
            call.prompt_tokens = len(output.prompt_token_ids)
        call.text += completion.text  # a delta
        call.completion_tokens += len(completion.token_ids)
        logprobs = _logprob_entries(completion, call.top_logprobs, self._tokenizer)
        if not call.delivered:
            call.delivered = True
            if output.prompt_logprobs:
                logprobs = _prompt_entries(output, call.top_logprobs, call.first_token, self._tokenizer) + logprobs
        # With tools, text is held back to the end: a call cannot be told from prose midway.
        if call.sink.stream and call.tool_format is None and (len(call.text) > call.sent or logprobs or call.echo):
            value = {"text": call.echo + call.text[call.sent:]}
            call.echo = ""
            if logprobs:
                value["logprobs"] = logprobs
            if not call.chunked:
                # The first CHUNK says the prompt's size (Anthropic's message_start carries it).
                value["prompt_tokens"], call.chunked = call.prompt_tokens, True
            call.sink.chunk(value)
            call.sent = len(call.text)
        elif logprobs:
            call.logprobs += logprobs
        if not output.finished:
            return
        del self._calls[request_id]
        if completion.finish_reason in _FAILED:
            # Not an answer cut short: vLLM gave up on it (a KV transfer failed, or it aborted
            # the request itself; the control plane's own aborts never get here).
            call.sink.fail(RuntimeError(_FAILED[completion.finish_reason]), "internal")
            return
        # "stop", "length", and "repetition" (vLLM's repetition detection ended the text).
        result = {"text": call.text, "finish_reason": "length" if completion.finish_reason == "length" else "stop"}
        if isinstance(call.tool_format, ForcedToolCall):
            tool_calls = call.tool_format.calls(call.text)
            if tool_calls:
                result.update(text="", tool_calls=tool_calls, finish_reason="tool_calls")
        elif call.tool_format is not None:
            rest, tool_calls = (parse_hermes if call.tool_format == "hermes" else parse_json_calls)(call.text)
            if tool_calls:
                result.update(text=rest, tool_calls=tool_calls, finish_reason="tool_calls")
        # vLLM's stop_reason: the stop string that ended the text, or the stop token id (the request's own only).
        reason = getattr(completion, "stop_reason", None)
        if result["finish_reason"] == "stop" and isinstance(reason, str):
            result["stop_sequence"] = reason
        elif result["finish_reason"] == "stop" and isinstance(reason, int) and reason in call.own_stop_ids:
            result["stop_token_id"] = reason
        prompt_tokens = call.prompt_tokens
        result["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": call.completion_tokens,
                           "total_tokens": prompt_tokens + call.completion_tokens}
        if call.sink.stream:
            held = result["text"][call.sent:] if call.tool_format is None else result["text"]
            call.sink.finish({**result, "text": call.echo + held})
        else:
            result["text"] = call.echo + result["text"]
            if call.top_logprobs is not None:
                result["logprobs"] = call.logprobs
            call.sink.finish(result)


def _prompt_entries(output, top: int | None, first_token: str, tokenizer=None) -> list[dict]:
    """vLLM's prompt_logprobs (None for the first token, then a {token id: Logprob} map
    holding the prompt's token and the likeliest ones) as the protocol's entries: the
    first with no log-probability and no alternatives, as OpenAI's echo answers."""
    entries = [{"token": first_token, "logprob": None, "bytes": list(first_token.encode()), "top_logprobs": None}]
    ids = output.prompt_token_ids or []
    for token_id, alternatives in zip(ids[1:], output.prompt_logprobs[1:]):
        chosen = (alternatives or {}).get(token_id)
        if chosen is None:  # vLLM always holds the prompt's own token; nothing to say otherwise
            raise RuntimeError(f"vLLM's prompt_logprobs lack the prompt's token {token_id}")
        entries.append(_entry(token_id, alternatives, top or 0, tokenizer))
    return entries


def _entry(token_id: int, alternatives: dict, top: int, tokenizer=None) -> dict:
    """One token's entry (OpenAI's chat shape) from its place's {token id: Logprob} map."""
    ranked = sorted(alternatives.items(), key=lambda item: item[1].rank if item[1].rank is not None else 1 << 30)[:top]

    def text_and_bytes(token: int, logprob) -> tuple[str, list[int]]:
        if tokenizer is not None:
            return _cached_text_and_bytes(tokenizer, token)
        text = logprob.decoded_token or ""
        return text, list(text.encode())

    text, raw = text_and_bytes(token_id, alternatives[token_id])
    alternatives_out = []
    for token, lp in ranked:
        alt_text, alt_raw = text_and_bytes(token, lp)
        alternatives_out.append({"token": alt_text, "logprob": float(lp.logprob), "bytes": alt_raw})
    return {"token": text, "logprob": float(alternatives[token_id].logprob), "bytes": raw, "top_logprobs": alternatives_out}


_TOKEN_TEXTS: dict[tuple[int, int], tuple[str, list[int]]] = {}
_TOKEN_TEXTS_KEPT = 65_536


def _cached_text_and_bytes(tokenizer, token: int) -> tuple[str, list[int]]:
    """A token's text and bytes, decoded once per tokenizer and id: a step's entries decode
    the chosen token and up to 20 alternatives each, on the scheduler's thread."""
    key = (id(tokenizer), token)
    found = _TOKEN_TEXTS.get(key)
    if found is None:
        if len(_TOKEN_TEXTS) >= _TOKEN_TEXTS_KEPT:
            _TOKEN_TEXTS.clear()
        text, raw = token_text_and_bytes(tokenizer, token)
        found = _TOKEN_TEXTS[key] = (text, raw)
    return found[0], list(found[1])


def _logprob_entries(completion, top: int | None, tokenizer=None) -> list[dict]:
    """vLLM's per-token {token id: Logprob} maps as the protocol's entries."""
    if top is None or not completion.logprobs:
        return []
    return [_entry(token_id, alternatives, top, tokenizer)
            for token_id, alternatives in zip(completion.token_ids, completion.logprobs) if token_id in alternatives]
