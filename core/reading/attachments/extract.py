"""One file's bytes to an `ExtractedAttachment`, or `AttachmentRefused` with the reason.

Synchronous and CPU-bound (pypdf, lxml): `core.reading.attachments.readers` runs it in a worker process
with a deadline and a memory ceiling; every reader stops at the characters the question has left.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from core.models.files import ExtractedAttachment, TextSection
from core.reading.attachments.budget import fit_prefix
from core.reading.attachments.detect import FileFormat, detect
from core.reading.attachments.errors import AttachmentRefused
from core.reading.attachments.limits import AttachmentLimits, format_bytes
from core.reading.attachments.pdf import extract_pdf
from core.reading.attachments.text import read_text_file
from core.reading.attachments.word import read_docx


def extract_file(
    name: str,
    data: bytes,
    *,
    declared_type: str | None = None,
    limits: AttachmentLimits | None = None,
    char_budget: int | None = None,
) -> ExtractedAttachment:
    """Read one file within `limits`; its text is cut to `char_budget` (default: the whole per-question limit)."""
    limits = limits or AttachmentLimits()
    budget = limits.max_chars if char_budget is None else char_budget
    _check_size(name, data, limits)
    found = detect(name, data, declared_type)
    sha256 = hashlib.sha256(data).hexdigest()
    if found.format is FileFormat.IMAGE:
        return ExtractedAttachment(
            name=name, kind="image", media_type=found.media_type, size=len(data), sha256=sha256, image_data=data
        )
    if budget <= 0:
        raise AttachmentRefused(
            name, f"not read: earlier files used the {limits.max_chars:,}-character limit for one question"
        )
    text = _read_text(name, data, found.format, limits, budget)
    return ExtractedAttachment(
        name=name,
        kind="text",
        media_type=found.media_type,
        size=len(data),
        sha256=sha256,
        sections=text.sections,
        page_count=text.page_count,
        notices=text.notices,
    )


@dataclass(frozen=True)
class _Text:
    sections: tuple[TextSection, ...]
    page_count: int | None
    notices: tuple[str, ...]


def _check_size(name: str, data: bytes, limits: AttachmentLimits) -> None:
    if len(data) > limits.max_file_bytes:
        raise AttachmentRefused(name, f"is larger than the {format_bytes(limits.max_file_bytes)} limit per file")
    if not data:
        raise AttachmentRefused(name, "is empty")


def _read_text(name: str, data: bytes, file_format: FileFormat, limits: AttachmentLimits, budget: int) -> _Text:
    """A PDF's pages, a DOCX's headings or a text file's one section, within `budget` characters."""
    if file_format is FileFormat.PDF:
        pdf = extract_pdf(name, data, max_pages=limits.max_pages, char_budget=budget, char_limit=limits.max_chars)
        return _Text(pdf.sections, pdf.page_count, pdf.notices)
    if file_format is FileFormat.DOCX:
        prefix = read_docx(name, data, max_unzipped_bytes=limits.max_unzipped_bytes, max_chars=budget)
    else:
        prefix = read_text_file(name, data, max_chars=budget)
    fitted = fit_prefix(name, prefix, budget, limit=limits.max_chars)
    return _Text(fitted.sections, None, (*prefix.notices, *((fitted.notice,) if fitted.notice else ())))
