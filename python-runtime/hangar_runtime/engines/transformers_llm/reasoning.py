"""Reasoning models think aloud between tags (`<think>` ... `</think>` for Qwen3
and DeepSeek-R1) before answering; that part goes out as `reasoning_content`,
the answer as `text`.

The reasoning either opens the reply (the model writes the start tag) or the
chat template already opened it at the end of the prompt (DeepSeek-R1 distills
do), in which case the reply starts inside it. Text arrives in pieces, so a
piece ending with what may be the start of a tag is held until the next one."""

from .holdback import split_held


class ReasoningSplitter:
    def __init__(self, start_tag: str, end_tag: str, starts_inside: bool):
        self._start, self._end = start_tag, end_tag
        self._state = "reasoning" if starts_inside else "opening"
        self._held = ""
        # The blank lines around the tags are layout, not content.
        self._trim_reasoning = self._trim_answer = True

    def feed(self, text: str) -> tuple[str, str]:
        """(reasoning, answer): the parts of the text so far that are safe to hand out."""
        text, self._held = self._held + text, ""
        reasoning = ""
        if self._state == "opening":
            stripped = text.lstrip()
            if stripped.startswith(self._start):
                self._state, text = "reasoning", stripped[len(self._start):]
            elif self._start.startswith(stripped):
                self._held = text  # blank so far, or part of the tag: wait
                return "", ""
            else:
                self._state = "answer"
                self._trim_answer = False  # no reasoning: the reply is the answer as written
        if self._state == "reasoning":
            cut = text.find(self._end)
            if cut < 0:
                reasoning, self._held = split_held(text, [self._end])
                return self._trimmed_reasoning(reasoning), ""
            reasoning, text = self._trimmed_reasoning(text[:cut]), text[cut + len(self._end):]
            self._state = "answer"
        return reasoning, self._trimmed_answer(text)

    def finish(self) -> tuple[str, str]:
        """What was held: reasoning cut off by the token limit stays reasoning."""
        held, self._held = self._held, ""
        if self._state == "reasoning":
            return self._trimmed_reasoning(held), ""
        return "", self._trimmed_answer(held)

    def _trimmed_reasoning(self, text: str) -> str:
        if self._trim_reasoning:
            text = text.lstrip()
            self._trim_reasoning = not text
        return text

    def _trimmed_answer(self, text: str) -> str:
        if self._trim_answer:
            text = text.lstrip()
            self._trim_answer = not text
        return text
