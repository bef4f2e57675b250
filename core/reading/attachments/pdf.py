"""PDF text layer, page by page (pypdf). Encrypted, corrupt and image-only PDFs are refused.

A PDF encrypted with an empty user password (only an owner password restricting printing or
copying, which is common) opens without a password and is read like any other.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from dataclasses import dataclass

from pypdf import PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError, PyPdfError

from core.models.files import TextSection
from core.reading.attachments.budget import fit_sections
from core.reading.attachments.errors import AttachmentRefused

log = logging.getLogger(__name__)
# pypdf logs a warning for every object it repairs in a damaged file; the refusal (or the file
# read anyway) already says what matters, and a user's upload must not flood the bot's log.
logging.getLogger("pypdf").setLevel(logging.ERROR)

_CORRUPT = "is not a readable PDF (damaged or incomplete)"


@dataclass(frozen=True)
class PdfText:
    """The text of a PDF's first pages, cut to a character budget."""

    sections: tuple[TextSection, ...]
    page_count: int
    notices: tuple[str, ...]


def extract_pdf(name: str, data: bytes, *, max_pages: int, char_budget: int, char_limit: int) -> PdfText:
    reader = _open(name, data)
    try:
        page_count = len(reader.pages)
    except Exception as exc:  # pypdf raises many kinds on a broken page tree
        log.info("pdf %r: page tree unreadable: %s", name, type(exc).__name__)
        raise AttachmentRefused(name, _CORRUPT) from exc
    if page_count == 0:
        raise AttachmentRefused(name, "has no pages")
    pages_to_read = min(page_count, max_pages)
    unreadable: list[int] = []
    fitted = fit_sections(
        name,
        _pages(reader, pages_to_read, unreadable),
        char_budget,
        limit=char_limit,
        later_units="pages",
        total_units=page_count,
    )
    sections = tuple(section for section in fitted.sections if section.text)
    if not fitted.stopped_early and not sections:
        if unreadable and len(unreadable) == pages_to_read:
            raise AttachmentRefused(name, _CORRUPT)
        raise AttachmentRefused(name, "has no text layer (a scanned document?), so there is nothing to read")
    notices: list[str] = []
    if unreadable:
        notices.append(f"{name}: {_page_list(unreadable)} could not be read")
    if fitted.notice:
        notices.append(fitted.notice)
    if page_count > max_pages and not fitted.stopped_early:
        notices.append(f"{name}: only the first {max_pages} of {page_count} pages were read (page limit)")
    return PdfText(sections, page_count, tuple(notices))


def _open(name: str, data: bytes) -> PdfReader:
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
    except Exception as exc:  # PdfReadError, but also ValueError/KeyError/... on mangled files
        log.info("pdf %r: cannot open: %s", name, type(exc).__name__)
        raise AttachmentRefused(name, _CORRUPT) from exc
    if reader.is_encrypted:
        try:
            opened = reader.decrypt("")
        except (DependencyError, FileNotDecryptedError, NotImplementedError, PyPdfError) as exc:
            raise AttachmentRefused(name, "is encrypted and cannot be read") from exc
        if not opened:
            raise AttachmentRefused(name, "is password-protected; send a copy without a password")
    return reader


def _pages(reader: PdfReader, count: int, unreadable: list[int]) -> Iterator[TextSection]:
    for index in range(count):
        number = index + 1
        try:
            text = reader.pages[index].extract_text() or ""
        except Exception as exc:  # one broken page must not lose the others
            log.info("pdf page %d unreadable: %s", number, type(exc).__name__)
            unreadable.append(number)
            text = ""
        # Blank pages are yielded too, so that the budget counts pages by their number.
        yield TextSection(label=f"page {number}", text=text.strip())


def _page_list(numbers: list[int]) -> str:
    if len(numbers) == 1:
        return f"page {numbers[0]}"
    shown = ", ".join(str(n) for n in numbers[:10])
    more = f" and {len(numbers) - 10} more" if len(numbers) > 10 else ""
    return f"pages {shown}{more}"
