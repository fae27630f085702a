"""OpenAI chat messages to the prompt text, through the model's chat template:
the load spec's `chat_template` when the registration gives one, else the
tokenizer's own."""

import json

from ...errors import field_error
from . import template_sandbox  # noqa: F401 - bounds the sandbox's size-choosing operations before any template compiles
from .template_limits import BoundedRender


def render_chat(tokenizer, messages, *, template: str | None, tools=None, chat_template_kwargs=None,
                parts: bool = False, add_generation_prompt: bool = True,
                continue_final_message: bool = False) -> str:
    """`tokenizer` may be a vision model's processor (same apply_chat_template); with
    `parts`, contents are lists of text and image parts (vision_inputs.split_images).
    `continue_final_message` (vLLM's field; Anthropic's prefill) ends the prompt inside
    the last message, for the answer to go on with it; `add_generation_prompt=False`
    ends it after the last message without opening the assistant's turn."""
    from jinja2 import TemplateError, TemplateSyntaxError

    if template is None and not getattr(tokenizer, "chat_template", None):
        raise ValueError("This model has no chat template: register one (chat_template) or use generate")
    if chat_template_kwargs is None:
        chat_template_kwargs = {}
    if not isinstance(chat_template_kwargs, dict):
        raise TypeError(f"chat_template_kwargs must be a map, got {type(chat_template_kwargs).__name__}")
    if tools is not None and (not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools)):
        raise TypeError("tools must be a list of maps")
    # Ours win over same-named chat_template_kwargs: the prompt must be text
    # ending where the assistant's reply starts.
    options = {**chat_template_kwargs, "tools": tools or None, "chat_template": template,
               "tokenize": False, "add_generation_prompt": add_generation_prompt and not continue_final_message,
               "continue_final_message": continue_final_message, "return_dict": False}
    normalized = normalize_messages(messages, parts=parts)
    # OpenAI's `developer` role is its `system` role by another name. A template that does
    # not name it has no branch for it and dropped the message silently: the instruction
    # never reached the model. So it is `system` there (gpt-oss's templates name it, and keep it).
    source = template if template is not None else getattr(tokenizer, "chat_template", None)
    if not (isinstance(source, str) and "developer" in source):
        normalized = [{**m, "role": "system"} if m.get("role") == "developer" else m for m in normalized]
    try:
        with BoundedRender():
            return tokenizer.apply_chat_template(normalized, **options)
    # Templates reject what they cannot render (raise_exception("...") in Jinja,
    # a role they do not know): the request is at fault, not the engine.
    # A template that does not parse is the registration's fault, whatever the messages.
    except TemplateSyntaxError as exc:
        raise ValueError(f"The chat template is not valid Jinja (line {exc.lineno}): {exc.message}") from exc
    except TemplateError as exc:
        raise ValueError(f"The chat template rejected the messages: {exc}") from exc
    # What Jinja's sandbox stops outside TemplateError: a range over its limit
    # (OverflowError), an `include` with no loader or an operation on the wrong type
    # (TypeError), a macro that recurses without end, and plain Python failing inside
    # the template (`1 / 0`, a missing key of a map, `'{'.format(1)`: ArithmeticError,
    # LookupError, ValueError), which were 500s. A registered template's fault (or its
    # messages'), said as such: not a failure of the engine.
    except (ArithmeticError, LookupError, TypeError, ValueError, RecursionError) as exc:
        # A limit's own refusal (TemplateLimitExceeded, a ValueError) says so already.
        if str(exc).startswith("The chat template"):
            raise
        # transformers' own refusals of continue_final_message quote the whole rendered
        # chat; said as the llama.cpp engine says them, naming the messages.
        if continue_final_message and str(exc).startswith("continue_final_message is set"):
            why = ("the final message does not appear in the chat after the chat template renders it, so it "
                   "cannot be continued") if "does not appear" in str(exc) else "this chat template writes no message content, so there is none to continue"
            raise field_error("messages", f"continue_final_message: {why}") from exc
        raise ValueError(f"The chat template could not render the messages: {type(exc).__name__}: {exc}") from exc


def normalize_messages(messages, parts: bool = False) -> list[dict]:
    """Copies of the messages in the shape chat templates expect; with `parts`, the
    contents are already lists of parts and stay so."""
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list")
    out = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise ValueError(f"messages[{index}] must be a map with a string role")
        message = dict(message)
        if not parts:
            message["content"] = _text_content(message.get("content"), index, message.get("role"))
        if message.get("tool_calls"):
            message["tool_calls"] = [_template_tool_call(call) for call in message["tool_calls"]]
        out.append(message)
    return out


def _text_content(content, index: int, role=None) -> str:
    # OpenAI allows a list of typed parts; a text-only model can take the text ones, and
    # an assistant's refusal part (history of an answer that refused) is its text.
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for at, part in enumerate(content):
            if isinstance(part, dict) and part.get("type") == "text" and not isinstance(part.get("text"), str):
                raise field_error(f"messages.{index}.content.{at}.text", f"messages[{index}].content[{at}].text must be a string (a text part's text)")
            if role == "assistant" and isinstance(part, dict) and part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
                texts.append(part["refusal"])
                continue
            if not isinstance(part, dict) or part.get("type") != "text":
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise field_error(f"messages.{index}.content.{at}", f"messages[{index}].content[{at}]: this model takes text only, not {kind} parts")
            texts.append(part["text"])
        return "".join(texts)
    raise ValueError(f"messages[{index}].content must be a string or a list of text parts")


def _template_tool_call(call) -> dict:
    # OpenAI sends arguments as a JSON string; templates (Qwen's and others)
    # render them with `tojson`, which would quote that string a second time.
    if not isinstance(call, dict):
        raise ValueError("tool_calls items must be maps")
    call = dict(call)
    function = call.get("function")
    if isinstance(function, dict) and isinstance(function.get("arguments"), str):
        function = dict(function)
        try:
            function["arguments"] = json.loads(function["arguments"])
        except ValueError:
            pass  # not JSON: the template gets the string as it is
        call["function"] = function
    return call


def check_template(template: str | None) -> None:
    """Compiles a registered chat template as transformers will, so one that does not
    parse fails the launch naming `chat_template`, instead of every chat later saying
    the template "rejected the messages"."""
    if not template:
        return
    from jinja2 import TemplateSyntaxError
    try:
        from transformers.utils.chat_template_utils import _compile_jinja_template
    except ImportError:  # a transformers without it: the first chat says it instead
        return
    try:
        _compile_jinja_template(template)
    except TemplateSyntaxError as exc:
        raise ValueError(f"chat_template is not valid Jinja (line {exc.lineno}): {exc.message}") from exc
