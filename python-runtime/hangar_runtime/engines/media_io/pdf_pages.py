"""PDF uploads to OCR (Xinference's `/v1/images/ocr` reads PDFs too, page by page):
each page is rasterized with PDFium (the pypdfium2 wheel) and read as an image, one
page at a time, so memory holds one page whatever the document's length."""

import threading

from ...errors import field_error
from .image_codec import MAX_IMAGE_PIXELS

PDF_MAGIC = b"%PDF"
DEFAULT_DPI = 200  # Xinference's DEFAULT_PDF_OCR_DPI
MAX_DPI = 600  # rasterizing finer rarely helps OCR, and costs memory (Xinference clamps here too)
MAX_PAGES = 200  # one request reads at most this many pages (Xinference's limit)
# PDFium is not thread-safe, even across documents (pypdfium2's own warning).
_PDFIUM = threading.Lock()


def is_pdf(data) -> bool:
    return isinstance(data, (bytes, bytearray)) and bytes(data[:4]) == PDF_MAGIC


def ocr_pdf(data: bytes, ocr_page, pages=None, dpi=None) -> dict:
    """Every selected page read by `ocr_page(PIL image) -> {"text", ...}`: the pages'
    texts joined by blank lines as `text` (what a client of one image reads), and each
    page's own answer under `pages` as Xinference merges them: `[{page, result}]`."""
    results = [(number, ocr_page(image)) for number, image in _rasterized(data, pages, dpi)]
    merged = {"text": "\n\n".join(str(r.get("text", "")) for _, r in results),
              "pages": [{"page": number, "result": r} for number, r in results]}
    if results and "lang" in results[0][1]:  # every page is read in the same language
        merged["lang"] = results[0][1]["lang"]
    return merged


def _rasterized(data: bytes, pages, dpi):
    try:
        import pypdfium2 as pdfium
    except ImportError as exc:
        raise RuntimeError("Reading PDFs needs the pypdfium2 package (python-runtime/requirements-media.txt)") from exc
    dpi = _dpi(dpi)
    scale = dpi / 72.0
    with _PDFIUM:
        try:
            pdf = pdfium.PdfDocument(bytes(data))
        except pdfium.PdfiumError as exc:
            raise ValueError(f"The PDF could not be read: {exc}") from exc
        try:
            numbers = _pages(pages, len(pdf))
            for number in numbers:
                page = pdf[number - 1]
                try:
                    width, height = page.get_size()
                finally:
                    page.close()
                pixels = int(width * scale) * int(height * scale)
                if pixels > MAX_IMAGE_PIXELS:
                    raise ValueError(f"Page {number} is {int(width * scale)}x{int(height * scale)} pixels at {dpi:g} dpi; "
                                     f"at most {MAX_IMAGE_PIXELS} pixels: ask for a lower `dpi`")
        except Exception:
            pdf.close()
            raise
    try:
        for number in numbers:
            with _PDFIUM:
                page = pdf[number - 1]
                try:
                    bitmap = page.render(scale=scale)
                    try:
                        image = bitmap.to_pil().convert("RGB")
                    finally:
                        bitmap.close()
                finally:
                    page.close()
            yield number, image
    finally:
        with _PDFIUM:
            pdf.close()


def _dpi(dpi) -> float:
    if dpi is None:
        return float(DEFAULT_DPI)
    if isinstance(dpi, bool) or not isinstance(dpi, (int, float)) or not dpi > 0:
        raise field_error("dpi", f"dpi must be a positive number, got {dpi!r}")
    return min(float(dpi), float(MAX_DPI))


def _pages(pages, count: int) -> list[int]:
    if count == 0:
        raise ValueError("The PDF has no pages")
    if pages is None:
        if count > MAX_PAGES:
            raise field_error("pages", f"The PDF has {count} pages; at most {MAX_PAGES} are read in one request: "
                                       f"choose some with `pages` (1-based numbers)")
        return list(range(1, count + 1))
    chosen = [pages] if isinstance(pages, int) and not isinstance(pages, bool) else pages
    if not isinstance(chosen, list) or not chosen or not all(isinstance(p, int) and not isinstance(p, bool) for p in chosen):
        raise field_error("pages", f"pages must be a 1-based page number or a non-empty list of them, got {pages!r}")
    if len(chosen) > MAX_PAGES:
        raise field_error("pages", f"{len(chosen)} pages asked for; at most {MAX_PAGES} in one request")
    for p in chosen:
        if not 1 <= p <= count:
            raise field_error("pages", f"Page {p} is out of range: the PDF has {count} page(s)")
    return list(chosen)
