"""A CALL's arguments to a Request: the prompt's token ids and how to generate.
The methods carry the protocol's signatures, so a wrong argument is a TypeError
(ERROR invalid) naming it."""

from dataclasses import dataclass

from ...errors import field_error
from ..token_prompt import is_token_prompt, token_prompt
from .chat_format import render_chat
from .generate_config import DEFAULT_MAX_TOKENS, GenerateConfig, parse_generate_config
from .sequence import Request
from .tool_calls import PRESERVED_TOKENS
from .vision_inputs import TEXT_ONLY, has_images, processed_inputs, split_images


@dataclass
class ModelFacts:
    """What the load settled that requests depend on."""
    tokenizer: object
    context_length: int
    eos_token_ids: frozenset[int]
    chat_template: str | None  # the registration's, overriding the tokenizer's
    stop: list[str]  # the registration's stop strings
    tool_format: str  # tool_calls.tool_call_format's
    reasoning_tags: tuple[str, str] | None  # set when the model has the reasoning ability
    abilities: tuple[str, ...]
    # The longest token's text in UTF-8 bytes (0: unknown), for the cheap size check.
    max_token_bytes: int = 0
    # The LoRA adapters loaded at launch, by name.
    adapters: tuple[str, ...] = ()
    # A vision model's processor: chat then takes image parts (vision_inputs.py).
    processor: object = None
    # Token ids a prompt may hold (0 to vocab_size - 1); 0: the tokenizer's length.
    vocab_size: int = 0


# A token's text never covers more of the prompt than this many times its own bytes
# (a normaliser may drop accents or fold width); the margin only delays a refusal.
TOKEN_BYTES_MARGIN = 4


def refuse_unfitting_prompt(prompt: str, context_length: int, max_token_bytes: int, field: str = "prompt") -> None:
    """Refuses, before tokenizing it, a prompt too long for the context whatever its
    tokens: tokenizing megabytes takes seconds, and the batch waits for it. What
    passes is at most about context_length x max_token_bytes x the margin bytes."""
    if max_token_bytes <= 0:
        return
    size = len(prompt.encode("utf-8", "surrogatepass"))
    at_least = size // (max_token_bytes * TOKEN_BYTES_MARGIN)
    if at_least >= context_length:
        raise field_error(field, f"The prompt is {size} bytes, so at least {at_least} tokens for this model, "
                                 f"which leaves no room in the model's context of {context_length} tokens")


# Text runs about 4 characters a token; a prompt this many times the context in
# characters is checked on a prefix first.
PREFIX_CHARS_PER_TOKEN = 8
# Tokens of a prefix may exceed those of the same text in the whole prompt by the
# merges the cut broke: a few tokens, never this many.
PREFIX_SLACK = 8


def refuse_long_prefix(prompt: str, context_length: int, count_tokens, field: str = "prompt") -> None:
    """For a long prompt, tokenizes only its start: when that alone fills the context,
    the whole cannot fit, and the rest (megabytes, seconds of the batch's thread) is
    never tokenized. A vocabulary of long tokens (where the byte bound is loose) still
    gets here."""
    limit = PREFIX_CHARS_PER_TOKEN * context_length
    if len(prompt) <= limit:
        return
    counted = count_tokens(prompt[:limit])
    if counted >= context_length + PREFIX_SLACK:
        raise field_error(field, f"The prompt is {len(prompt)} characters, and its first {limit} are already {counted} tokens, "
                                 f"which leaves no room in the model's context of {context_length} tokens")


def max_token_bytes(tokenizer) -> int:
    """The longest token's text (special tokens included) in UTF-8 bytes; 0 when the
    tokenizer does not list its vocabulary."""
    try:
        vocab = tokenizer.get_vocab()
    except Exception:  # noqa: BLE001 - any tokenizer without a listable vocabulary
        return 0
    return max((len(str(t).encode("utf-8", "surrogatepass")) for t in vocab), default=0)


class RequestBuilder:
    def __init__(self, facts: ModelFacts):
        self._facts = facts
        self._kept: dict[tuple, frozenset[int]] = {}

    @property
    def vocab_size(self) -> int:
        return self._facts.vocab_size or len(self._facts.tokenizer)

    def chat(self, messages, generate_config=None, tools=None, tool_choice=None, chat_template_kwargs=None,
             add_generation_prompt=True, continue_final_message=False) -> Request:
        return self.chat_stage(messages, generate_config, tools, tool_choice, chat_template_kwargs,
                               add_generation_prompt, continue_final_message)()

    def chat_stage(self, messages, generate_config=None, tools=None, tool_choice=None, chat_template_kwargs=None,
                   add_generation_prompt=True, continue_final_message=False):
        """The chat call up to its prompt text, rendered here; what it returns makes the
        Request (tokenizing, images) and may run on another thread. The template renders
        where it is called, which for the engine is the work loop: only there do the
        render's limits hold (template_limits.py)."""
        config = parse_generate_config(generate_config)
        if config.echo:
            raise ValueError("echo is for generate only")
        # tool_choice "none" means the model must not call tools: it is not told
        # about them. Forcing a call ("required", a named function) needs constrained
        # decoding, which this engine lacks: refused, not answered with free text.
        if tool_choice == "none":
            tools = None
        elif tool_choice not in (None, "auto"):
            raise field_error("tool_choice", "tool_choice \"required\" or a named function needs constrained decoding, "
                                             "which the Transformers engine lacks; use \"auto\", or the llama.cpp engine")
        processor = self._facts.processor
        images = []
        if processor is not None:
            messages, images = split_images(messages)
        elif has_images(messages):
            raise field_error("messages", TEXT_ONLY)
        prompt = render_chat(processor or self._facts.tokenizer, messages, template=self._facts.chat_template,
                             tools=tools, chat_template_kwargs=chat_template_kwargs, parts=processor is not None,
                             add_generation_prompt=add_generation_prompt is not False,
                             continue_final_message=continue_final_message is True)
        parse_tools = bool(tools) and "tools" in self._facts.abilities
        # gpt-oss writes every reply as harmony messages, with tools or without.
        harmony = self._facts.tool_format == "harmony"
        tags = None if harmony else self._facts.reasoning_tags
        # The template already wrote any BOS token; the tokenizer must not add another.
        tool_format = self._facts.tool_format if parse_tools else None
        keep_ids = self._kept_ids("harmony" if harmony else tool_format, tags)
        return lambda: self._request(prompt, config, add_special_tokens=False, field="messages",
                                     tool_format=tool_format, harmony=harmony, keep_ids=keep_ids,
                                     reasoning_tags=tags,
                                     # DeepSeek-R1's template ends the prompt inside the reasoning,
                                     # and so does a prefill continued inside it ("<think>Let me").
                                     reasoning_open=bool(tags) and (prompt.rstrip().endswith(tags[0]) or (
                                         continue_final_message is True and prompt.rfind(tags[0]) > prompt.rfind(tags[1]))),
                                     images=images)

    def _kept_ids(self, tool_format: str | None, tags: tuple[str, str] | None) -> frozenset[int]:
        """The special tokens a chat reply must keep as text, or its parsers would not see
        them: the tool format's markup and reasoning tags that are special tokens
        (`[THINK]`). Strings the vocabulary does not hold as one special token are left out."""
        key = (tool_format, tags)
        if key not in self._kept:
            tokenizer = self._facts.tokenizer
            kept = set()
            for text in (*(PRESERVED_TOKENS.get(tool_format, ()) if tool_format else ()), *(tags or ())):
                ids = tokenizer.encode(text, add_special_tokens=False)
                if len(ids) == 1 and tokenizer.decode(ids, skip_special_tokens=True) == "":
                    kept.add(ids[0])
            self._kept[key] = frozenset(kept)
        return self._kept[key]

    def generate(self, prompt, generate_config=None) -> Request:
        config = parse_generate_config(generate_config)
        # echo with logprobs: the prompt's own tokens are scored too (OpenAI's legacy completions).
        scored = config.echo and config.top_logprobs is not None
        if is_token_prompt(prompt):
            tokenizer = self._facts.tokenizer
            ids = token_prompt(prompt, self.vocab_size, context_length=self._facts.context_length)
            return self._request_for(ids, config, echo=tokenizer.decode(ids) if config.echo else "", prompt_logprobs=scored)
        if not isinstance(prompt, str):
            raise TypeError(f"prompt must be a string or a list of token ids, got {type(prompt).__name__}")
        return self._request(prompt, config, add_special_tokens=True, echo=prompt if config.echo else "",
                             prompt_logprobs=scored)

    def _request(self, prompt: str, config: GenerateConfig, *, add_special_tokens: bool, images=(), field="prompt",
                 **options) -> Request:
        """`field`: the request field a prompt too long is named by (chat's `messages`,
        completions' `prompt`), as OpenAI names it."""
        facts = self._facts
        refuse_unfitting_prompt(prompt, facts.context_length, facts.max_token_bytes, field)
        refuse_long_prefix(prompt, facts.context_length,
                           lambda head: len(facts.tokenizer(head, add_special_tokens=add_special_tokens)["input_ids"]), field)
        vision = None
        if images:
            # The processor expands each image's placeholder to its image tokens (those
            # count in the context and in usage) and makes the pixel values.
            ids, vision = processed_inputs(facts.processor, prompt, images)
        else:
            ids = list(facts.tokenizer(prompt, add_special_tokens=add_special_tokens)["input_ids"])
        if not ids:
            raise field_error(field, "The prompt is empty")
        return self._request_for(ids, config, vision=vision, field=field, **options)

    def _request_for(self, ids: list[int], config: GenerateConfig, *, vision=None, field="prompt", **options) -> Request:
        facts = self._facts
        if config.guide is not None:
            # No guided decoding here: refused rather than answered with free text (the
            # control plane refuses first; this is the runtime's own guard).
            raise field_error("response_format", "response_format json_object / json_schema needs the vLLM or llama.cpp engine; "
                                                 "the Transformers engine has no constrained decoding")
        if config.min_tokens:
            raise field_error("min_tokens", "min_tokens needs the vLLM engine; with this engine, ignore_eos and "
                                            "max_tokens fix an answer's length")
        outside = [t for t in config.logit_bias if t >= len(facts.tokenizer)]
        if outside:
            raise field_error("logit_bias", f"logit_bias: token ids {outside[:5]} are outside this model's vocabulary "
                                            f"(0 to {len(facts.tokenizer) - 1})")
        lora = config.lora_name
        if lora is not None and lora not in facts.adapters:
            have = ", ".join(facts.adapters) if facts.adapters else "none (launch with peft_model_config.lora_list)"
            raise field_error("lora_name", f"lora_name: {lora} is not a LoRA adapter of this model; its adapters: {have}")
        room = facts.context_length - len(ids)
        if room < 1:
            raise field_error(field, f"The prompt is {len(ids)} tokens, which leaves no room in the model's context "
                                     f"of {facts.context_length} tokens")
        return Request(
            prompt_ids=ids,
            config=config,
            max_tokens=min(config.max_tokens or DEFAULT_MAX_TOKENS, room),
            stop=facts.stop + config.stop,
            stop_token_ids=(frozenset() if config.ignore_eos else facts.eos_token_ids) | frozenset(config.stop_token_ids),
            lora_name=lora,
            vision=vision,
            **options,
        )
