"""What the council read besides the question: files and web sources."""

from __future__ import annotations

import re

from core.models.files import ExtractedAttachment
from core.models.requests import CouncilRequest
from core.models.search import SearchResult

READ_TITLE = "What the council read"
_UNSAFE_NAME = re.compile(r"[<>\r\n\t]+")


def safe_file_name(name: str) -> str:
    """A file name fit for a fence marker and a one-line notice (no brackets, no line breaks)."""
    return _UNSAFE_NAME.sub(" ", name).strip()[:200] or "unnamed file"


def files_notice(lines: list[str]) -> str:
    """The private note to the asker about files not read or cut (`AttachmentBatch.user_notices()`)."""
    return "About your files (only you can see this):\n" + "\n".join(f"• {line}" for line in lines)


def file_summary(attachment: ExtractedAttachment) -> str:
    """One line per file for history, `council show`, exports: name, type, size (and pages)."""
    pages = f", {attachment.page_count} page(s)" if attachment.page_count else ""
    return f"{safe_file_name(attachment.name)} ({attachment.media_type}, {_size(attachment.size)}{pages})"


def source_line(number: int, source: SearchResult) -> str:
    date = f" ({source.published.isoformat()})" if source.published else ""
    return f"[{number}] {source.title}{date}: {source.url}"


def read_lines(request: CouncilRequest) -> list[str]:
    """What the council read besides the question, as plain lines (empty when nothing)."""
    lines = [f"File: {file_summary(a)}" for a in request.attachments]
    lines += [f"Source {source_line(i, s)}" for i, s in enumerate(request.sources, 1)]
    return lines


def _size(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB"
    if size >= 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size} B"
