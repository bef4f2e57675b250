"""Which reader a file needs, decided from its bytes; the name and declared type only break ties.

A file whose name or declared type promises a format its bytes do not have is refused with the
format it claimed ("is not a valid PDF"), so a renamed executable never reaches a text reader
as "source code" and a truncated upload gets an honest reason.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from enum import Enum
from pathlib import PurePosixPath

from core.reading.attachments.errors import AttachmentRefused


class FileFormat(str, Enum):
    PDF = "pdf"
    DOCX = "docx"
    IMAGE = "image"
    TEXT = "text"


@dataclass(frozen=True)
class Detected:
    format: FileFormat
    media_type: str


DOCX_MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_IMAGE_NAMES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP"}

# Claims a name or a declared type can make, each mapped to the format it promises.
_EXTENSION_CLAIMS = {
    ".pdf": "application/pdf",
    ".docx": DOCX_MEDIA_TYPE,
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
# Slack's `filetype` values and MIME types, lower-case.
_DECLARED_CLAIMS = {
    "pdf": "application/pdf",
    "application/pdf": "application/pdf",
    "docx": DOCX_MEDIA_TYPE,
    DOCX_MEDIA_TYPE: DOCX_MEDIA_TYPE,
    "png": "image/png",
    "image/png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "image/jpeg": "image/jpeg",
    "gif": "image/gif",
    "image/gif": "image/gif",
    "webp": "image/webp",
    "image/webp": "image/webp",
}
_CLAIM_NAMES = {"application/pdf": "PDF", DOCX_MEDIA_TYPE: "DOCX", **_IMAGE_NAMES}
# Images models are not sent: named as such rather than called "binary".
_OTHER_IMAGE_EXTENSIONS = {".bmp", ".tif", ".tiff", ".heic", ".heif", ".avif", ".ico", ".svg", ".psd"}
UNSUPPORTED_IMAGE = "is an image type that is not supported (PNG, JPEG, WebP and GIF are)"

# Text media types by extension; anything else that decodes as text is text/plain (source code, logs...).
_TEXT_MEDIA_TYPES = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".json": "application/json",
    ".html": "text/html",
    ".htm": "text/html",
    ".xml": "application/xml",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
}


def image_media_type(data: bytes) -> str | None:
    """The image type from its magic bytes, or None for anything that is not PNG, JPEG, GIF or WebP."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def detect(name: str, data: bytes, declared_type: str | None = None) -> Detected:
    """The format of a file, or `AttachmentRefused` saying why it cannot be read."""
    claim = _claimed_media_type(name, declared_type)
    found = _from_magic(name, data)
    if found is not None:
        return found
    if claim is not None:
        raise AttachmentRefused(name, f"is not a valid {_CLAIM_NAMES[claim]} file (its content does not match)")
    suffix = PurePosixPath(name.lower()).suffix
    if suffix in _OTHER_IMAGE_EXTENSIONS or (declared_type or "").strip().lower().startswith("image/"):
        raise AttachmentRefused(name, UNSUPPORTED_IMAGE)
    if data.startswith(_OLE_MAGIC):
        raise AttachmentRefused(
            name, "is an encrypted Office file or an old binary Office format (save it as DOCX or PDF)"
        )
    if data.startswith(b"PK\x03\x04"):
        raise AttachmentRefused(name, "is an archive or Office file other than DOCX, which is not supported")
    return Detected(FileFormat.TEXT, _TEXT_MEDIA_TYPES.get(suffix, "text/plain"))


def _from_magic(name: str, data: bytes) -> Detected | None:
    # PDF readers accept up to 1 KB of junk before the header, and so do we.
    if b"%PDF-" in data[:1024]:
        return Detected(FileFormat.PDF, "application/pdf")
    image = image_media_type(data)
    if image is not None:
        return Detected(FileFormat.IMAGE, image)
    if data.startswith(b"PK\x03\x04") and _is_docx(data):
        return Detected(FileFormat.DOCX, DOCX_MEDIA_TYPE)
    return None


def _is_docx(data: bytes) -> bool:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return "word/document.xml" in archive.namelist()
    except Exception:  # a probe: BadZipFile, but also NotImplementedError, EOFError... on damaged zips
        return False


def _claimed_media_type(name: str, declared_type: str | None) -> str | None:
    if declared_type:
        claimed = _DECLARED_CLAIMS.get(declared_type.strip().lower().split(";")[0])
        if claimed is not None:
            return claimed
    return _EXTENSION_CLAIMS.get(PurePosixPath(name.lower()).suffix)
