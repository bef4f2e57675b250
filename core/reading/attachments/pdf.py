"""PDF text layer, page by page (pypdf). Encrypted, corrupt and image-only PDFs are refused.

Pages are reached lazily (`pdf_pages`) and reading stops at the page limit or once the
question's characters are there, so the rest of a long document is never walked.

A PDF encrypted with an empty user password (only an owner password restricting printing or
copying, which is common) opens without a password and is read like any other.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field

from pypdf import PageObject, PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError, PyPdfError

from core.models.files import TextSection
from core.reading.attachments.budget import fit_sections
from core.reading.attachments.errors import AttachmentRefused
from core.reading.attachments.pdf_pages import declared_page_count, iter_pages

log = logging.getLogger(__name__)
# pypdf logs a warning for every object it repairs in a damaged file; the refusal (or the file
# read anyway) already says what matters, and a user's upload must not flood the bot's log.
logging.getLogger("pypdf").setLevel(logging.ERROR)

_CORRUPT = "is not a readable PDF (damaged or incomplete)"


@dataclass(frozen=True)
class PdfText:
    """The text of a PDF's first pages, cut to a character budget."""

    sections: tuple[TextSection, ...]
    page_count: int | None
    notices: tuple[str, ...]


@dataclass
class _Walk:
    """What reading the pages found on the way: unreadable pages, and where the walk ended."""

    pages: Iterator[PageObject]
    read: int = 0
    unreadable: list[int] = field(default_factory=list)
    broken: bool = False  # the page tree could not be walked further

    def sections(self, max_pages: int) -> Iterator[TextSection]:
        while self.read < max_pages:
            page = self.next_page()
            if page is None:
                return
            self.read += 1
            yield TextSection(label=f"page {self.read}", text=self.page_text(page))

    def next_page(self) -> PageObject | None:
        if self.broken:
            return None
        try:
            return next(self.pages, None)
        except MemoryError:
            raise
        except Exception as exc:  # pypdf raises many kinds on a broken page tree
            log.info("pdf page tree unreadable after %d pages: %s", self.read, type(exc).__name__)
            self.broken = True
            return None

    def page_text(self, page: PageObject) -> str:
        try:
            # Blank pages are yielded too, so that the budget counts pages by their number.
            return (page.extract_text() or "").strip()
        except MemoryError:
            raise
        except Exception as exc:  # one broken page must not lose the others
            log.info("pdf page %d unreadable: %s", self.read, type(exc).__name__)
            self.unreadable.append(self.read)
            return ""


def extract_pdf(name: str, data: bytes, *, max_pages: int, char_budget: int, char_limit: int) -> PdfText:
    reader = _open(name, data)
    try:
        declared = declared_page_count(reader)
        walk = _Walk(iter_pages(reader))
    except MemoryError:
        raise
    except Exception as exc:
        log.info("pdf %r: page tree unreadable: %s", name, type(exc).__name__)
        raise AttachmentRefused(name, _CORRUPT) from exc
    fitted = fit_sections(
        name, walk.sections(max_pages), char_budget, limit=char_limit, later_units="pages", total_units=declared or 0
    )
    more = not fitted.stopped_early and walk.read == max_pages and walk.next_page() is not None
    if walk.read == 0:
        raise AttachmentRefused(name, _CORRUPT if walk.broken else "has no pages")
    sections = tuple(section for section in fitted.sections if section.text)
    if not fitted.stopped_early and not sections:
        if len(walk.unreadable) == walk.read or (walk.broken and not walk.unreadable):
            raise AttachmentRefused(name, _CORRUPT)
        raise AttachmentRefused(name, "has no text layer (a scanned document?), so there is nothing to read")
    notices = _notices(name, walk, fitted.notice, more, declared, max_pages)
    return PdfText(sections, _page_count(walk, declared, more, fitted.stopped_early), notices)


def _page_count(walk: _Walk, declared: int | None, more: bool, stopped_early: bool) -> int | None:
    """Counted when every page was walked, else the document's own count when it is plausible."""
    if not (more or stopped_early or walk.broken):
        return walk.read
    return declared if declared is not None and declared >= walk.read else None


def _notices(
    name: str, walk: _Walk, cut: str | None, more: bool, declared: int | None, max_pages: int
) -> tuple[str, ...]:
    notices: list[str] = []
    if walk.unreadable:
        notices.append(f"{name}: {_page_list(walk.unreadable)} could not be read")
    if walk.broken:
        notices.append(f"{name}: the pages after page {walk.read} could not be read (damaged page tree)")
    if cut:
        notices.append(cut)
    if more:
        of = f" of {declared:,}" if declared is not None and declared > max_pages else ""
        notices.append(f"{name}: only the first {max_pages}{of} pages were read (page limit)")
    return tuple(notices)


def _open(name: str, data: bytes) -> PdfReader:
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
    except MemoryError:
        raise
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


def _page_list(numbers: list[int]) -> str:
    if len(numbers) == 1:
        return f"page {numbers[0]}"
    shown = ", ".join(str(n) for n in numbers[:10])
    more = f" and {len(numbers) - 10} more" if len(numbers) > 10 else ""
    return f"pages {shown}{more}"
