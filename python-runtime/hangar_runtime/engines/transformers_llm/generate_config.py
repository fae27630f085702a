"""A call's `generate_config`, checked. Bad values raise ValueError or TypeError,
which the work loop answers as ERROR invalid before anything runs.

Keys this engine does not use are ignored (clients send OpenAI's whole set);
a key set to null means "not given"."""

import math
from dataclasses import dataclass, field

from ...errors import field_error

DEFAULT_MAX_TOKENS = 256


@dataclass
class GenerateConfig:
    max_tokens: int | None = None  # None: DEFAULT_MAX_TOKENS, capped by the context
    temperature: float = 1.0  # 0: greedy
    top_p: float = 1.0
    top_k: int = 0  # 0 (or -1): off
    repetition_penalty: float = 1.0
    seed: int | None = None
    stop: list[str] = field(default_factory=list)
    stop_token_ids: list[int] = field(default_factory=list)
    echo: bool = False
    # vLLM's: the model's end tokens do not end the answer (the request's own
    # stop_token_ids and stop strings still do); benchmarks use it to get max_tokens.
    ignore_eos: bool = False
    # vLLM's: tokens less likely than min_p times the likeliest are never drawn (0: off),
    # and no end token or stop before min_tokens (the vLLM engine's alone).
    min_p: float = 0.0
    min_tokens: int = 0
    # OpenAI's: penalties on tokens already generated, and a bias per token id.
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    logit_bias: dict[int, float] = field(default_factory=dict)
    # None: no log-probabilities; else this many alternatives per token (0 to 20).
    top_logprobs: int | None = None
    # OpenAI's response_format as a guide: None (free text), {"json_object": True}, or {"json": <schema>}.
    guide: dict | None = None
    # Xinference's: the LoRA adapter (of those loaded at launch) that answers; None: the base model.
    lora_name: str | None = None


# A temperature below this samples as greedy (vLLM's _SAMPLING_EPS).
GREEDY_BELOW = 1e-5
MIN_REPETITION_PENALTY = 0.01


def parse_generate_config(raw) -> GenerateConfig:
    if raw is None:
        return GenerateConfig()
    if not isinstance(raw, dict):
        raise TypeError(f"generate_config must be a map, got {type(raw).__name__}")
    get = {k: v for k, v in raw.items() if v is not None}.get
    config = GenerateConfig(
        max_tokens=_int(get("max_tokens"), "max_tokens", minimum=1),
        temperature=_number(get("temperature", 1.0), "temperature", minimum=0.0),
        top_p=_number(get("top_p", 1.0), "top_p", minimum=0.0),
        top_k=_int(get("top_k", 0), "top_k", minimum=-1),
        repetition_penalty=_number(get("repetition_penalty", 1.0), "repetition_penalty", minimum=0.0),
        seed=_int(get("seed"), "seed"),
        stop=_strings(get("stop", [])),
        stop_token_ids=_token_ids(get("stop_token_ids", [])),
        echo=_bool(get("echo", False), "echo"),
        ignore_eos=_bool(get("ignore_eos", False), "ignore_eos"),
        min_p=_number(get("min_p", 0.0), "min_p", minimum=0.0),
        min_tokens=_int(get("min_tokens", 0), "min_tokens", minimum=0),
        frequency_penalty=_number(get("frequency_penalty", 0.0), "frequency_penalty", minimum=-2.0),
        presence_penalty=_number(get("presence_penalty", 0.0), "presence_penalty", minimum=-2.0),
        logit_bias=_logit_bias(get("logit_bias", {})),
        top_logprobs=_top_logprobs(get("logprobs"), get("top_logprobs")),
        guide=_guide(get("response_format")),
        lora_name=_optional_name(get("lora_name"), "lora_name"),
    )
    for name in ("frequency_penalty", "presence_penalty"):
        if getattr(config, name) > 2.0:
            raise field_error(name, f"{name} must be from -2 to 2, got {getattr(config, name)}")
    if config.min_p > 1.0:
        raise field_error("min_p", f"min_p must be from 0 to 1, got {config.min_p}")
    if not 0.0 < config.top_p <= 1.0:
        raise field_error("top_p", f"top_p must be in (0, 1], got {config.top_p}")
    if config.repetition_penalty < MIN_REPETITION_PENALTY:
        # Below this the penalised logits overflow to inf and sampling breaks (nan).
        raise field_error("repetition_penalty", f"repetition_penalty must be at least {MIN_REPETITION_PENALTY:g}, "
                                                f"got {config.repetition_penalty}")
    if 0.0 < config.temperature < GREEDY_BELOW:
        # vLLM's rule: a temperature this small is greedy; dividing logits by it overflows.
        config.temperature = 0.0
    return config


def _number(value, name: str, minimum: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise field_error(name, f"{name} must be a number, got {value!r}", TypeError)
    if value < minimum:
        raise field_error(name, f"{name} must be at least {minimum:g}, got {value}")
    return float(value)


def _int(value, name: str, minimum: int | None = None) -> int | None:
    if value is None:
        return None
    # JSON has one number type: 3.0 is a fine max_tokens, 3.5 is not.
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise field_error(name, f"{name} must be an integer, got {value!r}", TypeError)
    if minimum is not None and value < minimum:
        raise field_error(name, f"{name} must be at least {minimum}, got {value}")
    return value


def _bool(value, name: str) -> bool:
    if not isinstance(value, bool):
        raise field_error(name, f"{name} must be true or false, got {value!r}", TypeError)
    return value


def _strings(value) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(s, str) for s in items):
        raise field_error("stop", f"stop must be a string or a list of strings, got {value!r}", TypeError)
    if "" in items:
        # It would end every answer before its first token; vLLM refuses it too.
        raise field_error("stop", "stop strings must not be empty")
    return list(items)


def _token_ids(value) -> list[int]:
    if not isinstance(value, list):
        raise field_error("stop_token_ids", f"stop_token_ids must be a list of integers, got {value!r}", TypeError)
    return [_int(v, "stop_token_ids item", minimum=0) for v in value]


def _logit_bias(value) -> dict[int, float]:
    if not isinstance(value, dict):
        raise field_error("logit_bias", f"logit_bias must be a map of token id to bias, got {value!r}", TypeError)
    out = {}
    for key, bias in value.items():
        try:
            token = int(key)
        except (TypeError, ValueError):
            raise field_error("logit_bias", f"logit_bias keys must be token ids, got {key!r}", TypeError) from None
        if token < 0:
            raise field_error("logit_bias", f"logit_bias: token id {token} is negative")
        out[token] = _number(bias, f"logit_bias[{key}]", minimum=-100.0)
        if out[token] > 100.0:
            raise field_error("logit_bias", f"logit_bias[{key}] must be from -100 to 100, got {out[token]}")
    return out


def _top_logprobs(asked, top) -> int | None:
    """`logprobs` true (chat) or a count (completions' legacy form), and `top_logprobs`."""
    if asked is None or asked is False:
        return None
    if asked is True:
        count = 0 if top is None else top
    else:
        count = asked
    count = _int(count, "top_logprobs", minimum=0)
    if count > 20:
        raise field_error("top_logprobs", f"top_logprobs must be an integer from 0 to 20, got {count}")
    return count


def _guide(value) -> dict | None:
    """OpenAI's `response_format`: text (no guide), json_object, or json_schema."""
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise field_error("response_format", f"response_format must be a map with a type, got {value!r}", TypeError)
    kind = value["type"]
    if kind == "text":
        return None
    if kind == "json_object":
        return {"json_object": True}
    if kind == "json_schema":
        spec = value.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, dict) else None
        if not isinstance(schema, dict):
            raise field_error("response_format.json_schema.schema", "response_format.json_schema.schema must be a JSON schema (a map)",
                              TypeError)
        return {"json": schema}
    raise field_error("response_format.type", f"response_format.type must be text, json_object or json_schema, got {kind!r}")


def _optional_name(value, name: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise field_error(name, f"{name} must be a string, got {value!r}", TypeError)
    return value
