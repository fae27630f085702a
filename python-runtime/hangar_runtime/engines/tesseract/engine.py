"""The `tesseract` engine: text and word boxes from the tesseract program (a Debian
package). One run writes both the plain text and the TSV word table, so the text
and the boxes always come from the same recognition."""

import csv
import os
import shutil
import subprocess
import tempfile

from ...errors import InvalidModel, field_error
from ..base import Engine, Progress
from ..media_io.image_codec import decode, to_png
from ..media_io.pdf_pages import is_pdf, ocr_pdf

PROGRAM = "tesseract"
# TSV level 5 rows are words; the others are page, block, paragraph and line.
WORD_LEVEL = "5"


class TesseractEngine(Engine):
    name = "tesseract"
    abilities = ("ocr",)

    def __init__(self):
        self._program = None
        self._languages: list[str] = []
        self._default_lang = "eng"

    def load(self, spec: dict, progress: Progress) -> None:
        self._program = shutil.which(PROGRAM)
        if self._program is None:
            raise InvalidModel(f"The tesseract engine needs the {PROGRAM} program on the PATH "
                               f"(Debian/Ubuntu: apt-get install tesseract-ocr tesseract-ocr-eng)")
        self._languages = _installed_languages(self._program)
        config = spec.get("model_config") or {}
        lang = config.get("lang", "eng") if isinstance(config, dict) else "eng"
        try:
            self._default_lang = self._check_lang(lang)
        except ValueError as exc:
            raise InvalidModel(str(exc)) from exc
        progress(1.0, "load", f"{PROGRAM} ready with languages {', '.join(self._languages)}")

    def describe(self) -> dict:
        return {"languages": list(self._languages), "default_lang": self._default_lang}

    def methods(self) -> dict:
        return {"ocr": self.ocr}

    def ocr(self, image, lang=None, pages=None, dpi=None, **_ignored) -> dict:
        lang = self._default_lang if lang in (None, "") else self._check_lang(lang)
        if is_pdf(image):
            return ocr_pdf(image, lambda page: self._read(page, lang), pages=pages, dpi=dpi)
        return self._read(image, lang)

    def _read(self, image, lang: str) -> dict:
        png = to_png(decode(image))
        with tempfile.TemporaryDirectory(prefix="hangar-ocr-") as folder:
            source = os.path.join(folder, "image.png")
            with open(source, "wb") as f:
                f.write(png)
            base = os.path.join(folder, "out")
            result = subprocess.run([self._program, source, base, "-l", lang, "txt", "tsv"],
                                    capture_output=True, timeout=300)
            if result.returncode != 0:
                raise RuntimeError(f"{PROGRAM} failed (exit {result.returncode}): "
                                   f"{result.stderr.decode(errors='replace').strip()}")
            with open(base + ".txt", encoding="utf-8") as f:
                text = f.read()
            with open(base + ".tsv", encoding="utf-8", newline="") as f:
                words = _words(f)
        # tesseract ends every page with a form feed and blank lines.
        return {"text": text.replace("\f", "").strip(), "words": words, "lang": lang}

    def _check_lang(self, lang) -> str:
        """`eng`, or several joined with `+` (`eng+deu`), each installed."""
        if not isinstance(lang, str):
            raise field_error("lang", f"lang must be a string such as 'eng', got {type(lang).__name__}")
        missing = [part for part in lang.split("+") if part not in self._languages]
        if missing:
            raise field_error("lang", f"Tesseract language {', '.join(missing)} is not installed; "
                             f"installed: {', '.join(self._languages)}")
        return lang


def _installed_languages(program: str) -> list[str]:
    listing = subprocess.run([program, "--list-langs"], capture_output=True, text=True, timeout=30, check=True)
    # The first line says where the data is; `osd` is orientation detection, not a language.
    return [line.strip() for line in listing.stdout.splitlines()[1:] if line.strip() and line.strip() != "osd"]


def _words(tsv_file) -> list[dict]:
    words = []
    for row in csv.DictReader(tsv_file, delimiter="\t", quoting=csv.QUOTE_NONE):
        text = (row.get("text") or "").strip()
        if row.get("level") != WORD_LEVEL or not text:
            continue
        words.append({
            "text": text,
            "confidence": round(float(row["conf"]), 2),
            "box": {"x": int(row["left"]), "y": int(row["top"]), "width": int(row["width"]), "height": int(row["height"])},
            "block": int(row["block_num"]), "line": int(row["line_num"]),
        })
    return words
