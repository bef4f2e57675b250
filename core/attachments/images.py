"""Images (PNG, JPEG, GIF, WebP) kept as they are, and their OpenAI image content part.

The bytes are not re-encoded: models take these four formats directly. The magic bytes decide
the media type (a `.png` that is a JPEG is sent as image/jpeg).
"""

from __future__ import annotations

from typing import Any

from core.attachments.models import ExtractedAttachment


def image_content_part(attachment: ExtractedAttachment, *, detail: str | None = None) -> dict[str, Any]:
    """The Chat Completions content part for an image attachment:

    {"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}

    `detail` ("low", "high", "auto") is passed through when given; OpenRouter and OpenAI accept it.
    A user message with images has `content` as a list of parts: a {"type": "text", "text": ...}
    part followed by these.
    """
    image_url: dict[str, Any] = {"url": attachment.data_url()}
    if detail is not None:
        image_url["detail"] = detail
    return {"type": "image_url", "image_url": image_url}
