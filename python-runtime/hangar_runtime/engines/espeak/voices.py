"""The voices the installed espeak-ng offers, read from `espeak-ng --voices`."""

import re
import subprocess

from ...errors import field_error

# OpenAI's voice names: OpenAI clients always send one, so each means the model's
# default voice rather than an error.
OPENAI_VOICES = frozenset({"alloy", "ash", "ballad", "coral", "echo", "fable", "nova", "onyx", "sage", "shimmer",
                           "verse", "marin", "cedar"})


def installed_voices(program: str) -> list[str]:
    """Voice names as `-v` takes them (`en-us`, `de`, ...), in espeak-ng's order, then
    the other names voices answer to (`en`, `fr`: `espeak-ng -v en` speaks).

    The listing is a table: `Pty Language Age/Gender VoiceName File Other Languages`;
    the Language column is the name `-v` accepts, and so is each language in the last
    column's `(en 10)` pairs."""
    listing = subprocess.run([program, "--voices"], capture_output=True, text=True, timeout=30, check=True).stdout
    voices, others = [], []
    for line in listing.splitlines()[1:]:
        columns = line.split()
        if len(columns) >= 2 and columns[1] not in voices:
            voices.append(columns[1])
        others.extend(re.findall(r"\((\S+) \d+\)", line))
    return voices + [name for name in dict.fromkeys(others) if name not in voices]


def installed_variants(program: str) -> list[str]:
    """Variant names as `-v voice+variant` takes them: the file names (`f3`, `Alex`) of
    `espeak-ng --voices=variant`, case and all. espeak-ng speaks an unknown variant
    (`en+alex`, `en+nope`) in the base voice without a word."""
    listing = subprocess.run([program, "--voices=variant"], capture_output=True, text=True, timeout=30, check=True).stdout
    return list(dict.fromkeys(re.findall(r"!v/(\S+)", listing)))


def choose_voice(requested, default: str, voices: list[str], variants: list[str]) -> str:
    """The `-v` value for a request's `voice`. A voice variant (`en-us+f3`, `en+f3`) is
    accepted when its base voice and its variant are installed."""
    if requested in (None, "") or (isinstance(requested, str) and requested.lower() in OPENAI_VOICES):
        return default
    if not isinstance(requested, str):
        raise field_error("voice", f"voice must be a string, got {type(requested).__name__}")
    base = requested.split("+", 1)[0]
    if base not in voices:
        # The default and English first: the alphabet alone showed af to da, none a user looks for.
        first = [default] + [v for v in voices if v.startswith("en") and v != default]
        shown_list = first + [v for v in voices if v not in first]
        shown = ", ".join(shown_list[:20]) + (", ..." if len(voices) > 20 else "")
        raise field_error("voice", f"Unknown voice {requested!r}; installed espeak-ng voices include: {shown} "
                                   f"(all of them: `espeak-ng --voices` on the server)")
    variant = requested.split("+", 1)[1] if "+" in requested else None
    if variant is not None and variant not in variants:
        close = [v for v in variants if v.lower() == variant.lower()]
        hint = f"; did you mean {base}+{close[0]}? (variant names are case-sensitive)" if close else ""
        raise field_error("voice", f"Unknown voice variant {variant!r} in {requested!r}{hint}; installed espeak-ng "
                                   f"variants include: {', '.join(variants[:20])}{', ...' if len(variants) > 20 else ''} "
                                   f"(all of them: `espeak-ng --voices=variant` on the server)")
    return requested
