"""Continuous batching: every running sequence advances by one token per step in
one batched forward pass, and calls that arrived meanwhile join at the start of
the next step (up to max_batch_size; the rest wait in arrival order).

A step first drops the sequences that are done (finished, failed, aborted), then
does one of two things:
- admit waiting calls: one forward pass over their prompts (left-padded
  together) gives each its first token and a KV cache, joined to the batch's;
- decode: one forward pass feeds every running sequence its last chosen token
  and chooses the next.
A step that admits ends there, so the newcomers' first tokens leave the runtime
(the work loop sends a step's answers when it ends) without waiting for a decode
of the whole batch: that decode is time to first token nobody asked for. The step
after an admission always decodes, even with more calls waiting, so a stream of
arrivals cannot starve the running sequences: each still gets one token per
prefill-and-decode, as when both were one step.

Rows are left-padded and masked, and each sequence's position ids count only its
own tokens, so a sequence computes what it would alone; greedy output is the
same alone or in any batch, up to float rounding in the padded matmuls."""

import inspect
import logging
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import torch

from ...errors import exception_text
from ..base import BatchScheduler, CallSink
from . import kv_cache
from .loaded_model import LoadedModel
from .prompt_scoring import score_prompt
from .sequence import Sequence
from .vision_inputs import batch_vision_inputs

log = logging.getLogger("hangar_runtime.transformers")

# A call whose text is longer than this (in characters) is tokenized on a thread of
# its own, so the running batch keeps stepping meanwhile (a fast tokenizer releases the
# GIL); its chat template still renders on the work loop first, where the render's
# limits hold (template_limits.py). Shorter ones are prepared at once, as they arrive.
PREPARE_APART_CHARS = 64 * 1024


class Batcher(BatchScheduler):
    def __init__(self, loaded: LoadedModel, make_sequence, methods: frozenset[str], max_batch_size: int,
                 stage_sequence=None):
        """make_sequence(method, args, kwargs, sink) -> Sequence, raising for bad input;
        stage_sequence(method, args, kwargs, sink) -> (() -> Sequence) or None: for a long
        call, the part that must run on the work loop now (a chat's render) is done, and
        what it returns finishes apart; None: all of make_sequence runs apart."""
        self._stage_sequence = stage_sequence
        self._loaded = loaded
        self._model = loaded.model
        self._make_sequence = make_sequence
        self.methods = methods
        self.max_batch_size = max_batch_size
        self._waiting: list[Sequence] = []
        self._running: list[Sequence] = []  # row i of the cache is _running[i]
        self._cache = None
        self._mask: torch.Tensor | None = None
        self._decode_next = False  # the last step admitted: this one decodes
        # Only the last position's logits are needed; models that can skip the rest say so.
        # A peft model's forward takes **kwargs: ask the model it wraps.
        inner = self._model.get_base_model() if hasattr(self._model, "get_base_model") else self._model
        self._logits_to_keep = "logits_to_keep" in inspect.signature(inner.forward).parameters
        self._adapters = bool(loaded.adapters)
        # Qwen2-VL and Qwen2.5-VL place image tokens by 3-D rotary positions (M-RoPE);
        # the model's own bookkeeping of them assumes one batch from start to end.
        self._rope_index = getattr(getattr(inner, "model", None), "get_rope_index", None)
        # Tests turn this off to check the rebuild path on a model whose cache could be joined.
        self.join_caches = True
        # Long calls being prepared apart (PREPARE_APART_CHARS): their sequences, or the
        # error that refused them, come back through _prepared.
        self._preparing = 0
        self._prepared: deque = deque()
        self._prepared_event = threading.Event()
        self._preparer: ThreadPoolExecutor | None = None
        self._wake = lambda: None

    def set_wake(self, wake) -> None:
        self._wake = wake

    def submit(self, method: str, args: list, kwargs: dict, sink: CallSink) -> None:
        if _text_size(args) + _text_size(kwargs) <= PREPARE_APART_CHARS:
            self._waiting.append(self._make_sequence(method, args, kwargs, sink))
            return
        finish = self._stage_sequence(method, args, kwargs, sink) if self._stage_sequence else None
        if finish is None:
            def finish():
                return self._make_sequence(method, args, kwargs, sink)
        if self._preparer is None:
            self._preparer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hangar-prepare")
        self._preparing += 1
        self._preparer.submit(self._prepare_apart, finish, sink)

    def _prepare_apart(self, finish, sink: CallSink) -> None:
        try:
            self._prepared.append((finish(), None, sink))
        except Exception as exc:  # noqa: BLE001 - a refusal is the call's answer
            self._prepared.append((None, exc, sink))
        self._prepared_event.set()
        self._wake()

    def has_work(self) -> bool:
        return bool(self._waiting or self._running or self._preparing)

    def wait_before_step(self) -> float:
        # Only calls being prepared: nothing to step until one is ready (wake() ends the wait).
        if self._preparing and not (self._waiting or self._running or self._prepared):
            return 1.0
        return 0.0

    def _take_prepared(self) -> None:
        if self._preparing and not (self._waiting or self._running or self._prepared):
            # Called directly (_run_alone), not from the work loop: wait, do not spin.
            self._prepared_event.wait(0.05)
        self._prepared_event.clear()
        while self._prepared:
            sequence, error, sink = self._prepared.popleft()
            self._preparing -= 1
            if error is not None:
                sink.fail(error)
            elif not sink.closed:
                self._waiting.append(sequence)

    @torch.inference_mode()
    def step(self) -> None:
        self._take_prepared()
        self._retire()
        if not self._decode_next and self._admit():
            self._retire()
            self._decode_next = bool(self._running)
            return
        self._decode_next = False
        if self._running:
            self._decode()
        self._retire()

    # ---- batch membership ----

    def _retire(self) -> None:
        self._waiting = [s for s in self._waiting if not s.done]
        keep = [i for i, s in enumerate(self._running) if not s.done]
        if len(keep) == len(self._running):
            return
        if keep:
            self._mask = kv_cache.keep_rows(self._cache, self._mask, keep)
        else:
            self._cache = self._mask = None
        self._running = [self._running[i] for i in keep]

    def _admit(self) -> bool:
        """True when waiting calls were admitted (a prefill ran)."""
        room = self.max_batch_size - len(self._running)
        if room <= 0 or not self._waiting:
            return False
        joining, self._waiting = self._waiting[:room], self._waiting[room:]
        if any(s.request.prompt_logprobs for s in joining):
            joining = self._score_prompts(joining)
            if not joining:
                return True
        if self._running and not (self.join_caches and kv_cache.joinable(self._cache)):
            self._rebuild(joining)
            return True
        cache, mask, logits = self._prefill([s.request.prompt_ids for s in joining], joining)
        if logits is None:
            return True
        for seq in joining:
            seq.cached = len(seq.request.prompt_ids)
        self._choose(joining, logits)
        if self._running:
            self._mask = kv_cache.join(self._cache, self._mask, cache, mask)
        else:
            self._cache, self._mask = cache, mask
        self._running += joining
        return True

    def _rebuild(self, joining: list[Sequence]) -> None:
        """For caches that cannot be joined: one prefill over every running
        sequence's tokens so far (all but its pending token) and the newcomers'
        prompts makes the new batch cache. Only the newcomers' logits are used."""
        everyone = self._running + joining
        rows = [s.history[:-1] for s in self._running] + [s.request.prompt_ids for s in joining]
        cache, mask, logits = self._prefill(rows, everyone)
        if logits is None:
            self._cache = self._mask = None
            self._running = []
            return
        for seq, row in zip(everyone, rows):
            seq.cached = len(row)
        self._choose(joining, logits[len(self._running):])
        self._cache, self._mask = cache, mask
        self._running = everyone

    def _score_prompts(self, joining: list[Sequence]) -> list[Sequence]:
        """Scores the prompts that asked for it (prompt_scoring.py); a pass that fails
        (out of memory, say) fails its own call only. The calls still to be admitted."""
        for seq in joining:
            if not seq.request.prompt_logprobs or seq.done:
                continue
            try:
                seq.put_prompt_logprobs(score_prompt(
                    self._model, seq.request.prompt_ids, self._loaded.device, self._loaded.tokenizer,
                    seq.request.config.top_logprobs or 0,
                    [seq.request.lora_name or "__base__"] if self._adapters else None))
            except Exception as exc:
                log.error("scoring the prompt of call %s failed", seq.sink.call_id, exc_info=True)
                seq.fail(RuntimeError(f"Scoring the prompt failed: {exception_text(exc)}"), kind="internal")
        return [s for s in joining if not s.done]

    # ---- forward passes ----

    def _prefill(self, rows: list[list[int]], sequences: list[Sequence]):
        ids, mask = kv_cache.left_pad(rows, self._loaded.pad_token_id, self._loaded.device)
        cache = kv_cache.new_cache(self._model.config)
        extra = {"logits_to_keep": 1} if self._logits_to_keep else {}
        if self._loaded.processor is not None:
            extra.update(batch_vision_inputs(rows, [s.request.vision for s in sequences], ids.shape[1], self._loaded.device))
        positions = kv_cache.positions(mask)
        if self._rope_index is not None and "image_grid_thw" in extra:
            positions = self._mrope_positions(ids, mask, extra, sequences)
        logits = self._forward(sequences, input_ids=ids, attention_mask=mask,
                               position_ids=positions, past_key_values=cache, **extra)
        return cache, mask, logits

    def _mrope_positions(self, ids, mask, vision: dict, sequences: list[Sequence]) -> torch.Tensor:
        """[3, rows, columns] M-RoPE positions from the model's own get_rope_index. Each
        sequence keeps its offset (the positions its image saved over its token count),
        so a decode step's position is its cached tokens plus that offset, for every
        row of any batch: after the last image, the three axes advance together."""
        positions, deltas = self._rope_index(ids, mm_token_type_ids=vision["mm_token_type_ids"],
                                             image_grid_thw=vision["image_grid_thw"], attention_mask=mask)
        for seq, delta in zip(sequences, deltas.view(-1).tolist()):
            seq.rope_delta = int(delta)
        return positions

    def _decode(self) -> None:
        running = self._running
        device = self._loaded.device
        ids = torch.tensor([[s.pending] for s in running], dtype=torch.long, device=device)
        positions = torch.tensor([[s.cached + s.rope_delta] for s in running], dtype=torch.long, device=device)
        mask = torch.cat([self._mask, self._mask.new_ones((len(running), 1))], dim=1)
        logits = self._forward(running, input_ids=ids, attention_mask=mask, position_ids=positions,
                               past_key_values=self._cache)
        if logits is None:
            self._cache = self._mask = None  # every row failed; they are dropped next step
            return
        self._mask = mask
        for seq in running:
            seq.cached += 1
        self._choose(running, logits)

    def _forward(self, sequences: list[Sequence], **inputs) -> torch.Tensor | None:
        """Last-position logits [rows, vocab], or None after failing every sequence
        in the pass (out of memory, say): the others in the runtime go on."""
        if self._adapters:
            # Each row through its own LoRA adapter, or none (peft's mixed-batch inference).
            inputs["adapter_names"] = [s.request.lora_name or "__base__" for s in sequences]
        try:
            out = self._model(use_cache=True, **inputs)
        except Exception as exc:
            log.error("forward pass over %d sequences failed", len(sequences), exc_info=True)
            for seq in sequences:
                seq.fail(RuntimeError(f"Generation failed: {exception_text(exc)}"), kind="internal")
            return None
        return out.logits[:, -1, :]

    def _choose(self, sequences: list[Sequence], logits: torch.Tensor) -> None:
        # One argmax for the whole batch (a single device sync), which every
        # greedy sequence without penalties takes as is.
        argmax = logits.argmax(dim=-1).tolist()
        for i, seq in enumerate(sequences):
            if seq.done:
                continue
            try:
                seq.accept(seq.choose(logits[i], argmax[i]))
            except Exception as exc:  # one sequence's bad luck (say NaN probabilities) is its own
                log.error("sequence of call %s failed", seq.sink.call_id, exc_info=True)
                seq.fail(exc, kind="internal")


def _text_size(value) -> int:
    """Characters of text in a call's arguments (message contents, a prompt), roughly."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(_text_size(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_text_size(v) for v in value)
    return 0
