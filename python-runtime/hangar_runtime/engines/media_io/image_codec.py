"""Image bytes in and out, with Pillow. An upload is checked to be an image in a
format Pillow reads before any engine sees it; generated images go back as PNG."""

import io

INPUT_FORMATS = ("png", "jpeg", "gif", "bmp", "tiff", "webp")


def decode(data):
    """A loaded PIL image in RGB. Raises ValueError naming the formats it reads."""
    from PIL import Image, UnidentifiedImageError

    if not isinstance(data, (bytes, bytearray)) or len(data) == 0:
        raise ValueError(f"The image file is empty; expected one of: {', '.join(INPUT_FORMATS)}")
    try:
        image = Image.open(io.BytesIO(bytes(data)))
        image.load()
    except (UnidentifiedImageError, OSError, SyntaxError) as exc:
        raise ValueError(f"The image file could not be decoded; expected one of: {', '.join(INPUT_FORMATS)}") from exc
    except Image.DecompressionBombError as exc:
        raise ValueError(f"The image is too large to decode: {exc}") from exc
    return image.convert("RGB")


def to_png(image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()
