"""Limits on what one question may attach, read from `Settings` (defaults in core/settings/reading.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.settings import Settings

MB = 1024 * 1024


@dataclass(frozen=True)
class AttachmentLimits:
    max_file_bytes: int = 20 * MB
    max_files: int = 5
    max_chars: int = 100_000  # extracted text of all files of one question together
    max_pages: int = 200  # PDF pages read per file; the rest is left out with a notice
    max_total_bytes: int = 50 * MB  # all files of one question together
    fetch_timeout_s: float = 30.0
    # A DOCX is a zip: refuse one whose parts would inflate beyond this (zip bombs).
    max_unzipped_bytes: int = 200 * MB

    @classmethod
    def from_settings(cls, settings: Settings) -> AttachmentLimits:
        return cls(
            max_file_bytes=int(settings.attachments.max_file_mb * MB),
            max_files=settings.attachments.max_files,
            max_chars=settings.attachments.max_chars,
            max_pages=settings.attachments.max_pages,
            max_total_bytes=int(settings.attachments.max_total_mb * MB),
            fetch_timeout_s=settings.attachments.fetch_timeout_s,
        )


def format_bytes(size: int) -> str:
    """A size as people read it: 512 bytes, 14 KB, 20 MB."""
    if size < 1024:
        return f"{size} bytes"
    if size < MB:
        return f"{size / 1024:.0f} KB"
    value = size / MB
    return f"{value:.0f} MB" if value >= 10 or value.is_integer() else f"{value:.1f} MB"
