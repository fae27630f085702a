"""Picking the next token from one sequence's logits. Each sequence of a batch
has its own settings and its own random generator, so a seeded request draws
the same tokens whatever else shares the batch."""

import random

import torch

from .generate_config import GenerateConfig


class Sampler:
    def __init__(self, config: GenerateConfig):
        self.temperature = config.temperature
        self.top_p = config.top_p
        self.top_k = config.top_k if config.top_k > 0 else 0
        self.min_p = config.min_p
        self.repetition_penalty = config.repetition_penalty
        self.frequency_penalty = config.frequency_penalty
        self.presence_penalty = config.presence_penalty
        self.logit_bias = config.logit_bias
        # Greedy is exact argmax: temperature 0 (or a top_k of 1) leaves no choice.
        self.greedy = self.temperature == 0.0 or self.top_k == 1
        # Then the batch's shared argmax can stand in for choose().
        self.plain_greedy = (self.greedy and self.repetition_penalty == 1.0 and not self.logit_bias
                             and self.frequency_penalty == 0.0 and self.presence_penalty == 0.0)
        self._seed = config.seed if config.seed is not None else random.SystemRandom().randrange(2**63)
        self._generator: torch.Generator | None = None  # made on the logits' device at first use

    def choose(self, logits: torch.Tensor, history: list[int], generated: list[int] | None = None) -> int:
        """logits: this sequence's [vocab] row; history: its prompt and generated ids;
        generated: the ids generated so far (OpenAI's penalties count only those, as vLLM)."""
        logits = logits.float()
        if self.repetition_penalty != 1.0 and history:
            logits = apply_repetition_penalty(logits, history, self.repetition_penalty)
        if (self.frequency_penalty or self.presence_penalty) and generated:
            logits = apply_openai_penalties(logits, generated, self.frequency_penalty, self.presence_penalty)
        if self.logit_bias:
            logits = apply_logit_bias(logits, self.logit_bias)
        if self.greedy:
            return int(torch.argmax(logits))
        logits = logits / self.temperature
        if self.top_k:
            logits = keep_top_k(logits, self.top_k)
        if self.top_p < 1.0:
            logits = keep_top_p(logits, self.top_p)
        if self.min_p > 0.0:
            logits = keep_min_p(logits, self.min_p)
        probs = torch.softmax(logits, dim=-1)
        return int(torch.multinomial(probs, 1, generator=self._generator_for(probs.device)))

    def _generator_for(self, device: torch.device) -> torch.Generator:
        if self._generator is None:
            self._generator = torch.Generator(device=device)
            self._generator.manual_seed(self._seed)
        return self._generator


def apply_repetition_penalty(logits: torch.Tensor, history: list[int], penalty: float) -> torch.Tensor:
    # As in transformers' RepetitionPenaltyLogitsProcessor (CTRL paper): seen
    # tokens become less likely whichever side of zero their logit is on.
    ids = torch.tensor(sorted(set(history)), device=logits.device, dtype=torch.long)
    seen = logits.gather(0, ids)
    seen = torch.where(seen < 0, seen * penalty, seen / penalty)
    return logits.scatter(0, ids, seen)


def apply_openai_penalties(logits: torch.Tensor, generated: list[int], frequency: float, presence: float) -> torch.Tensor:
    # OpenAI's definition: logit -= count * frequency_penalty + (count > 0) * presence_penalty.
    ids, counts = torch.unique(torch.tensor(generated, device=logits.device, dtype=torch.long), return_counts=True)
    penalty = counts.to(logits.dtype) * frequency + presence
    return logits.scatter_add(0, ids, -penalty)


def apply_logit_bias(logits: torch.Tensor, bias: dict[int, float]) -> torch.Tensor:
    # Ids past this model's vocabulary were refused by the engine before the call ran.
    ids = torch.tensor(list(bias), device=logits.device, dtype=torch.long)
    values = torch.tensor(list(bias.values()), device=logits.device, dtype=logits.dtype)
    return logits.scatter_add(0, ids, values)


def keep_top_k(logits: torch.Tensor, k: int) -> torch.Tensor:
    if k >= logits.shape[-1]:
        return logits
    threshold = torch.topk(logits, k).values[-1]
    return logits.masked_fill(logits < threshold, float("-inf"))


def keep_top_p(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Keeps the most likely tokens whose probabilities add up to p (nucleus
    sampling); the token that crosses p is kept, so at least one always is."""
    sorted_logits, order = torch.sort(logits, descending=True)
    probs = torch.softmax(sorted_logits, dim=-1)
    before = torch.cumsum(probs, dim=-1) - probs  # mass of the tokens ranked above each
    drop_sorted = before >= p
    # A p below float32's smallest value rounds to 0, and would drop even the likeliest.
    drop_sorted[0] = False
    drop = torch.zeros_like(drop_sorted).scatter(0, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))


def keep_min_p(logits: torch.Tensor, min_p: float) -> torch.Tensor:
    """Keeps the tokens at least min_p times as likely as the likeliest (vLLM's min_p,
    after temperature, as vLLM applies it); the likeliest is always kept."""
    probs = torch.softmax(logits, dim=-1)
    return logits.masked_fill(probs < min_p * probs.max(), float("-inf"))
