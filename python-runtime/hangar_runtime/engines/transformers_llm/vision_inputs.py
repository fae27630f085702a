"""Images in chat messages, for vision models: OpenAI `image_url` parts (as the
control plane passes them: `data:` URLs, any http(s) image already fetched by it,
docs/vision.md) to PIL images, and the messages to the shape vision chat templates
read (`content` a list of `{"type": "text"}` and `{"type": "image"}` parts).

The runtime never fetches a URL itself: what reaches it is bytes, checked here for
size and decodability before the model sees them."""

import base64
import re
import binascii
import io
import warnings

from ...errors import field_error

from ..media_io.image_codec import INPUT_FORMATS, MAX_IMAGE_PIXELS, PIL_FORMATS

# All the images of one request together: sixteen 11 kB PNGs of 36 M pixels each are
# each under MAX_IMAGE_PIXELS and took 4.2 GB together. Checked from each header, before
# the image is decoded.
MAX_REQUEST_PIXELS = 2 * MAX_IMAGE_PIXELS
# Longest side over shortest side (Qwen2-VL's processor refuses past 200 too).
MAX_ASPECT_RATIO = 200
# The control plane holds each image to HANGAR_IMAGE_MAX_BYTES (docs/vision.md); this
# only guards a direct caller, above anything a 50 MiB chat body can carry.
MAX_IMAGE_BYTES = 64 * 1024 * 1024
MAX_IMAGES = 16
TEXT_ONLY = "messages: this model takes text only, not image_url parts (launch a model with the vision ability)"


def split_images(messages: list[dict]) -> tuple[list[dict], list]:
    """(messages with every content a list of text and image parts, the images in
    order of appearance). Earlier turns' images count as the latest turn's do."""
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list")
    out, images = [], []
    pixels_left = MAX_REQUEST_PIXELS
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise ValueError(f"messages[{index}] must be a map with a string role")
        content = message.get("content")
        if content is None or isinstance(content, str):
            parts = [{"type": "text", "text": content or ""}]
        elif isinstance(content, list):
            parts = []
            for at, part in enumerate(content):
                where = f"messages[{index}].content[{at}]"
                kind = part.get("type") if isinstance(part, dict) else None
                if kind == "text" and isinstance(part.get("text"), str):
                    parts.append({"type": "text", "text": part["text"]})
                elif kind == "image_url":
                    if len(images) == MAX_IMAGES:
                        raise field_error("messages", f"messages: more than {MAX_IMAGES} images; at most {MAX_IMAGES} per request")
                    try:
                        image = decode_image(_image_url(part, where), where, pixels_left)
                    except ValueError as exc:
                        raise field_error(f"messages.{index}.content.{at}.image_url.url", str(exc)) from exc
                    pixels_left -= image.width * image.height
                    images.append(image)
                    parts.append({"type": "image"})
                else:
                    raise field_error(f"messages.{index}.content.{at}",
                                      f"{where}: this model takes text and image_url parts, not {kind or type(part).__name__}")
        else:
            raise ValueError(f"messages[{index}].content must be a string or a list of parts")
        out.append({**message, "content": parts})
    return out, images


# Processor outputs with one value per prompt token: padded with the prompt in a batch.
PER_TOKEN_KEYS = frozenset({"token_type_ids", "mm_token_type_ids"})


def processed_inputs(processor, prompt: str, images: list) -> tuple[list[int], dict]:
    """(prompt ids with each image's placeholder expanded to its image tokens, the
    other model inputs: pixel values and what goes with them)."""
    # The template already wrote any BOS token, as for text.
    out = processor(text=[prompt], images=images, return_tensors="pt", add_special_tokens=False)
    ids = out["input_ids"][0].tolist()
    return ids, {key: value for key, value in out.items() if key not in ("input_ids", "attention_mask")}


def has_images(messages) -> bool:
    return isinstance(messages, list) and any(
        isinstance(m, dict) and isinstance(m.get("content"), list)
        and any(isinstance(p, dict) and p.get("type") == "image_url" for p in m["content"])
        for m in messages)


def _image_url(part: dict, where: str) -> str:
    value = part.get("image_url")
    url = value.get("url") if isinstance(value, dict) else value
    if not isinstance(url, str):
        raise ValueError(f"{where}.image_url.url must be a string")
    return url


def decode_image(url: str, where: str, pixels_left: int = MAX_REQUEST_PIXELS):
    """A `data:image/...;base64,` URL to an RGB PIL image, or ValueError naming `where`;
    `pixels_left`: what the request's earlier images left of MAX_REQUEST_PIXELS."""
    from PIL import Image

    if not url.startswith("data:"):
        raise ValueError(f"{where}.image_url.url: the runtime takes data: URLs (the service fetches http(s) images)")
    header, comma, payload = url.partition(",")
    if not comma or not header.endswith(";base64"):
        raise ValueError(f"{where}.image_url.url: a data: URL must be base64 (data:image/png;base64,...)")
    if len(payload) > MAX_IMAGE_BYTES * 4 // 3 + 4:
        raise ValueError(f"{where}.image_url.url: the image is over {MAX_IMAGE_BYTES} bytes")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"{where}.image_url.url: not valid base64 ({exc})") from exc
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            # The formats clients send (OpenAI's and Anthropic's four, BMP and TIFF), not
            # every decoder Pillow has: a crafted AVIF or QOI raised errors of their own, 500s.
            image = Image.open(io.BytesIO(data), formats=PIL_FORMATS)
            width, height = image.size
            if width * height > MAX_IMAGE_PIXELS:
                raise ValueError(f"{where}: the image is {width}x{height} pixels; at most {MAX_IMAGE_PIXELS} pixels")
            if width * height > pixels_left:
                raise ValueError(f"{where}: the request's images come to over {MAX_REQUEST_PIXELS} pixels with this one ({width}x{height}); send fewer or smaller images")
            # A processor scales the short side up to its size (336, 448, ...): a 1x6,000,000
            # strip became billions of pixels and a MemoryError. Qwen2-VL's own bound.
            if min(width, height) < 1 or max(width, height) > MAX_ASPECT_RATIO * min(width, height):
                raise ValueError(f"{where}: the image is {width}x{height} pixels; its long side may be at most {MAX_ASPECT_RATIO} times its short side")
            return image.convert("RGB")
    except Exception as exc:  # a decoder's own error on crafted bytes is the input's fault, whatever its kind
        if isinstance(exc, ValueError) and str(exc).startswith(where):
            raise  # one of the refusals above
        # PIL names the buffer it read (`<_io.BytesIO object at 0x...>`): an address, not news to the caller.
        why = re.sub(r"<_io\.BytesIO object at 0x[0-9a-fA-F]+>", "the data", str(exc))
        raise ValueError(f"{where}: not an image this service can read ({type(exc).__name__}: {why}); "
                         f"send one of: {', '.join(INPUT_FORMATS)}") from exc


def batch_vision_inputs(rows: list[list[int]], visions: list[dict | None], width: int, device) -> dict:
    """One prefill's image inputs: each key's tensors joined in row order (models fill
    their image tokens in the order they appear in the batch), and per-token keys
    laid out like the left-padded ids (0 for padding and for text)."""
    import torch

    present = [v for v in visions if v]
    if not present:
        return {}
    out = {}
    for key in {k for v in present for k in v}:
        if key in PER_TOKEN_KEYS:
            table = torch.zeros((len(rows), width), dtype=torch.long)
            for i, (row, vision) in enumerate(zip(rows, visions)):
                if vision and key in vision:
                    values = vision[key][0]
                    start = width - len(row)
                    table[i, start:start + len(values)] = values
            out[key] = table.to(device)
        else:
            out[key] = torch.cat([v[key] for v in present if key in v]).to(device)
    return out
