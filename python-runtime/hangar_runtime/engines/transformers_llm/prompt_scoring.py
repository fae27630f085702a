"""The log-probabilities of a prompt's own tokens: completions' `echo` with `logprobs`,
OpenAI's legacy answer and what lm-evaluation-harness reads for log-likelihoods.

The batch's prefill keeps only each prompt's last position's logits; a scored prompt
gets a pass of its own over all its positions, in chunks with a KV cache, so no more
than CHUNK_TOKENS rows of vocabulary-wide logits exist at once (a 2,048-token prompt
of a 150k vocabulary would be 1.2 GB of float32 in one piece). The pass costs about
one more prefill of that prompt; the generated tokens are then scored as usual."""

import torch

from . import kv_cache
from .sequence import logprob_entry

CHUNK_TOKENS = 256


@torch.inference_mode()
def score_prompt(model, ids: list[int], device, tokenizer, top: int, adapter_names: list[str] | None = None) -> list[dict]:
    """One entry per prompt token: the first with no log-probability (nothing predicts
    it), each other with the log-probability the model gave it after the tokens before
    it and the `top` likeliest tokens at that place (the model's own distribution, as
    for generated tokens)."""
    entries = [logprob_entry(tokenizer, ids[0], None, None)]
    cache = kv_cache.new_cache(model.config)
    # A model with LoRA adapters takes peft's per-row adapter names, as in the batch.
    extra = {"adapter_names": adapter_names} if adapter_names is not None else {}
    # Positions 0 .. len-2 predict tokens 1 .. len-1; the last position's prediction is
    # the first generated token, which the batch's prefill makes.
    for start in range(0, len(ids) - 1, CHUNK_TOKENS):
        end = min(start + CHUNK_TOKENS, len(ids) - 1)
        out = model(input_ids=torch.tensor([ids[start:end]], dtype=torch.long, device=device),
                    position_ids=torch.arange(start, end, dtype=torch.long, device=device)[None],
                    attention_mask=torch.ones((1, end), dtype=torch.long, device=device),
                    past_key_values=cache, use_cache=True, **extra)
        logprobs = torch.log_softmax(out.logits[0].float(), dim=-1)
        del out
        targets = ids[start + 1:end + 1]
        chosen = logprobs.gather(1, torch.tensor(targets, device=device)[:, None])[:, 0].tolist()
        best = torch.topk(logprobs, top) if top else None
        indices = best.indices.tolist() if best is not None else None
        values = best.values.tolist() if best is not None else None
        for k, target in enumerate(targets):
            entries.append(logprob_entry(tokenizer, target, chosen[k],
                                         list(zip(indices[k], values[k])) if best is not None else []))
    return entries
