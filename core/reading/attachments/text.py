"""Plain text, Markdown, CSV, JSON, logs and source code: decoded as UTF-8, binaries refused.

The bytes are decoded in chunks and decoding stops once the question's characters are there: a
20 MB file of one line costs the characters the council reads, not the whole file as a string.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator

from core.models.files import TextSection
from core.reading.attachments.budget import Prefix
from core.reading.attachments.errors import AttachmentRefused

_SAMPLE_BYTES = 8192
_CHUNK_BYTES = 64 * 1024
# Control characters that real text files do contain.
_TEXT_CONTROLS = {0x08, 0x09, 0x0A, 0x0C, 0x0D, 0x1B}
# More than this share of other control bytes in the sample means a binary file.
_MAX_CONTROL_SHARE = 0.10


def read_text_file(name: str, data: bytes, *, max_chars: int) -> Prefix:
    """The file's text, decoded chunk by chunk until more than `max_chars` characters are there
    (one more than fits tells a cut from a fit); `complete` when that reached the end."""
    pieces: list[str] = []
    kept = 0
    complete = True
    chunks = _decoded_chunks(name, data)
    for piece, last in chunks:
        pieces.append(piece)
        kept += len(piece)
        if kept > max_chars and not last:
            complete = False
            break
    text = "".join(pieces)
    if not text.strip() and (complete or not any(piece.strip() for piece, _ in chunks)):
        raise AttachmentRefused(name, "is empty")
    return Prefix((TextSection(label=None, text=text),), complete=complete, unread="the file")


def looks_binary(data: bytes) -> bool:
    sample = data[:_SAMPLE_BYTES]
    if not sample:
        return False
    if b"\x00" in sample:
        return True
    controls = sum(1 for byte in sample if byte < 0x20 and byte not in _TEXT_CONTROLS)
    return controls / len(sample) > _MAX_CONTROL_SHARE


def _decoded_chunks(name: str, data: bytes) -> Iterator[tuple[str, bool]]:
    """(text, is the last chunk): UTF-8 (BOM dropped) or UTF-16 with a BOM, invalid bytes as
    U+FFFD, newlines as "\\n"."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        decoder = codecs.getincrementaldecoder("utf-16")(errors="replace")
    elif looks_binary(data):
        raise AttachmentRefused(name, "looks like a binary file, not text, and its type is not supported")
    else:
        decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
    view = memoryview(data)
    held = ""  # a "\r" at a chunk's end may be the first half of "\r\n"
    for start in range(0, len(view), _CHUNK_BYTES):
        final = start + _CHUNK_BYTES >= len(view)
        piece = held + decoder.decode(view[start : start + _CHUNK_BYTES], final=final)
        held = "\r" if piece.endswith("\r") and not final else ""
        if held:
            piece = piece[:-1]
        yield piece.replace("\r\n", "\n").replace("\r", "\n"), final
