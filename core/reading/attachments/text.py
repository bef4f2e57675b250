"""Plain text, Markdown, CSV, JSON, logs and source code: decoded as UTF-8, binaries refused."""

from __future__ import annotations

import codecs

from core.models.files import TextSection
from core.reading.attachments.errors import AttachmentRefused

_SAMPLE_BYTES = 8192
# Control characters that real text files do contain.
_TEXT_CONTROLS = {0x08, 0x09, 0x0A, 0x0C, 0x0D, 0x1B}
# More than this share of other control bytes in the sample means a binary file.
_MAX_CONTROL_SHARE = 0.10


def decode_text(name: str, data: bytes) -> str:
    """The file as text: UTF-8 (BOM dropped) or UTF-16 with a BOM; invalid bytes become U+FFFD."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = data.decode("utf-16", errors="replace")
    else:
        if looks_binary(data):
            raise AttachmentRefused(name, "looks like a binary file, not text, and its type is not supported")
        text = data.decode("utf-8-sig", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def looks_binary(data: bytes) -> bool:
    sample = data[:_SAMPLE_BYTES]
    if not sample:
        return False
    if b"\x00" in sample:
        return True
    controls = sum(1 for byte in sample if byte < 0x20 and byte not in _TEXT_CONTROLS)
    return controls / len(sample) > _MAX_CONTROL_SHARE


def extract_text_file(name: str, data: bytes) -> tuple[TextSection, ...]:
    text = decode_text(name, data)
    if not text.strip():
        raise AttachmentRefused(name, "is empty")
    return (TextSection(label=None, text=text),)
