"""The model's tokenizer as methods of an LLM engine, for vLLM's tokenizer routes
(`POST /tokenize`, `POST /detokenize`, `GET /tokenizer_info`; docs/runtime-protocol.md,
"Tokenizer methods"): what lm-evaluation-harness's remote tokenizer and other clients
of vLLM's server ask. Shared by the transformers and vllm engines, whose tokenizers
are the same Hugging Face tokenizers."""

from collections.abc import Callable

from ..errors import field_error
from .token_prompt import token_prompt


class TokenizerMethods:
    def __init__(self, tokenizer, context_length: int, chat_ids: Callable[..., list[int]],
                 chat_template: str | None, vocab_size: int = 0):
        """chat_ids(messages, tools, chat_template_kwargs, add_generation_prompt,
        continue_final_message): a chat call's prompt ids, as the engine's chat renders
        and tokenizes them (refusing alike)."""
        self._tokenizer = tokenizer
        self._context_length = context_length
        self._chat_ids = chat_ids
        self._chat_template = chat_template
        self._vocab_size = vocab_size or len(tokenizer)

    def methods(self) -> dict:
        return {"tokenize": self.tokenize, "detokenize": self.detokenize, "tokenizer_info": self.tokenizer_info}

    def tokenize(self, prompt, add_special_tokens=None, return_token_strs=False, tools=None,
                 chat_template_kwargs=None, add_generation_prompt=True, continue_final_message=False) -> dict:
        """A text's ids (with the tokenizer's special tokens unless add_special_tokens is
        false), or a chat's: the messages as a chat call would send them (special tokens
        only as the template writes them, unless add_special_tokens is true, vLLM's defaults)."""
        if isinstance(prompt, str):
            ids = list(self._tokenizer(prompt, add_special_tokens=add_special_tokens is not False)["input_ids"])
        elif isinstance(prompt, list):
            if add_special_tokens:
                raise field_error("add_special_tokens", "add_special_tokens: true is for a prompt; a chat's special tokens are its template's")
            ids = list(self._chat_ids(prompt, tools, chat_template_kwargs, add_generation_prompt, continue_final_message))
        else:
            raise TypeError(f"prompt must be a string or a list of messages, got {type(prompt).__name__}")
        out = {"tokens": ids, "max_model_len": self._context_length}
        if return_token_strs:
            out["token_strs"] = self._tokenizer.convert_ids_to_tokens(ids)
        return out

    def detokenize(self, tokens) -> dict:
        if not isinstance(tokens, list):
            raise field_error("tokens", f"tokens must be a list of token ids, got {type(tokens).__name__}")
        ids = token_prompt(tokens, self._vocab_size, "tokens") if tokens else []
        return {"prompt": self._tokenizer.decode(ids)}

    def tokenizer_info(self) -> dict:
        """vLLM's tokenizer_info fields: the special tokens as text, the chat template the
        engine renders with, and the context."""
        t = self._tokenizer
        return {"tokenizer_class": type(t).__name__, "bos_token": t.bos_token, "eos_token": t.eos_token,
                "pad_token": t.pad_token, "unk_token": t.unk_token,
                "chat_template": self._chat_template or getattr(t, "chat_template", None),
                "model_max_length": self._context_length, "vocab_size": self._vocab_size}
