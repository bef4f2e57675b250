"""Image and file content parts of an OpenAI-style request, as files for the council to read.

Accepted: `image_url` / `input_image` with a `data:` URL, and `file` / `input_file` with inline
`file_data` (a `data:` URL or bare base64) and a `filename`. The council never fetches a URL a
caller names (that would let any caller make the server fetch any address), and has no file store
for `file_id`: both are refused with a 400 that says so.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from core.models.files import IncomingFile

FILE_PARTS = {"image_url", "input_image", "file", "input_file"}


def part_file(part: dict[str, Any], index: int) -> IncomingFile:
    """The file of one content part; ValueError (a 400) with a one-line reason when unusable."""
    kind = str(part.get("type"))
    if kind in ("image_url", "input_image"):
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        if not isinstance(url, str) or not url.startswith("data:"):
            raise ValueError(f"`{kind}` parts must carry the image inline as a data: URL (remote URLs are not fetched)")
        media_type, data = _data_url(url, kind)
        extension = media_type.partition("/")[2] or "bin"
        return IncomingFile(name=f"image-{index}.{extension}", declared_type=media_type, data=data)
    payload = part.get("file") if kind == "file" else part
    if not isinstance(payload, dict):
        raise ValueError(f"`{kind}` parts need a `file` object with `file_data` and `filename`")
    if payload.get("file_id") and not payload.get("file_data"):
        raise ValueError(f"`{kind}` parts must carry the file inline in `file_data` (there is no file store)")
    raw = payload.get("file_data")
    if not isinstance(raw, str) or not raw:
        raise ValueError(f"`{kind}` parts need `file_data` (base64, or a data: URL)")
    declared, data = _data_url(raw, kind) if raw.startswith("data:") else (None, _base64(raw, kind))
    name = payload.get("filename") if isinstance(payload.get("filename"), str) else None
    return IncomingFile(name=name or f"file-{index}", declared_type=declared, data=data)


def _data_url(url: str, kind: str) -> tuple[str, bytes]:
    header, sep, body = url.partition(",")
    if not sep or not header.endswith(";base64"):
        raise ValueError(f"`{kind}`: only base64 data: URLs are accepted")
    return header.removeprefix("data:").removesuffix(";base64") or "application/octet-stream", _base64(body, kind)


def _base64(text: str, kind: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"`{kind}`: the data is not valid base64") from None
