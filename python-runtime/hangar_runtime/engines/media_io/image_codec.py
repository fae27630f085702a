"""Image bytes in and out, with Pillow. An upload is checked to be an image in a
format Pillow reads before any engine sees it; generated images go back as PNG."""

import io

INPUT_FORMATS = ("png", "jpeg", "gif", "bmp", "tiff", "webp")
# Pillow's names of them: only these decoders are tried (Image.open's `formats`), not every
# one Pillow has; a crafted AVIF or QOI raised errors of their own.
PIL_FORMATS = tuple(f.upper() for f in INPUT_FORMATS)
# A decoded image bigger than this many pixels is refused, from its header: a small
# PNG or JPEG can expand to gigabytes of pixels (a "decompression bomb": 631 bytes of
# JPEG declaring 13300x13300 took 1.9 GB to read); PIL only refuses past 178 M.
MAX_IMAGE_PIXELS = 40_000_000


def decode(data):
    """A loaded PIL image in RGB (bytes are decoded; an image, e.g. a PDF's rendered
    page, is taken as it is). Raises ValueError naming the formats it reads."""
    from PIL import Image

    if isinstance(data, Image.Image):
        return data.convert("RGB")
    if not isinstance(data, (bytes, bytearray)) or len(data) == 0:
        raise ValueError(f"The image file is empty; expected one of: {', '.join(INPUT_FORMATS)}")
    try:
        image = Image.open(io.BytesIO(bytes(data)), formats=PIL_FORMATS)
        width, height = image.size
        if width * height > MAX_IMAGE_PIXELS:
            raise ValueError(f"The image is {width}x{height} pixels; at most {MAX_IMAGE_PIXELS} pixels")
        image.load()
    except Image.DecompressionBombError as exc:
        raise ValueError(f"The image is too large to decode: {exc}") from exc
    except Exception as exc:  # UnidentifiedImageError, OSError, a decoder's own error on crafted bytes
        if isinstance(exc, ValueError) and str(exc).startswith("The image is"):
            raise  # the size refusal above
        raise ValueError(f"The image file could not be decoded; expected one of: {', '.join(INPUT_FORMATS)}") from exc
    return image.convert("RGB")


def to_png(image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()
