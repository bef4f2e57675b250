"""DOCX paragraphs and tables in document order (python-docx), in sections split at headings.

Tables become one line per row with cells separated by " | " (merged cells once), which models
read well and which keeps CSV-like data aligned. Old binary .doc files are not DOCX and are
refused by `detect`; a DOCX whose parts would inflate beyond the limit is refused here.
"""

from __future__ import annotations

import io
import logging
import zipfile

import docx
from docx.table import Table
from docx.text.paragraph import Paragraph

from core.models.files import TextSection
from core.reading.attachments.errors import AttachmentRefused
from core.reading.attachments.limits import format_bytes

log = logging.getLogger(__name__)

_HEADING_STYLES = ("heading", "title")
_MAX_LABEL_CHARS = 80
_DAMAGED = "is not a readable DOCX file (damaged or incomplete)"


def extract_docx(name: str, data: bytes, *, max_unzipped_bytes: int) -> tuple[TextSection, ...]:
    _check_unzipped_size(name, data, max_unzipped_bytes)
    try:
        document = docx.Document(io.BytesIO(data))
        blocks = list(document.iter_inner_content())
    except Exception as exc:  # BadZipFile, KeyError, lxml errors, ValueError on a broken package
        log.info("docx %r: cannot open: %s", name, type(exc).__name__)
        raise AttachmentRefused(name, _DAMAGED) from exc
    sections = _sections(blocks)
    if not any(section.text.strip() for section in sections):
        raise AttachmentRefused(name, "has no text")
    return sections


def _check_unzipped_size(name: str, data: bytes, limit: int) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            inflated = sum(info.file_size for info in archive.infolist())
    except Exception as exc:  # BadZipFile, NotImplementedError ("zip file version"), EOFError...
        raise AttachmentRefused(name, _DAMAGED) from exc
    if inflated > limit:
        raise AttachmentRefused(name, f"would unpack to more than {format_bytes(limit)}, which is refused")


def _sections(blocks: list[Paragraph | Table]) -> tuple[TextSection, ...]:
    sections: list[TextSection] = []
    label: str | None = None
    lines: list[str] = []

    def close() -> None:
        text = "\n".join(lines).strip()
        if text:
            sections.append(TextSection(label=label, text=text))

    for block in blocks:
        if isinstance(block, Paragraph):
            text = block.text.strip()
            if _is_heading(block) and text:
                close()
                label, lines = _label(text), [text]
            elif text:
                lines.append(text)
        else:
            lines.extend(_table_lines(block))
    close()
    return tuple(sections)


def _is_heading(paragraph: Paragraph) -> bool:
    style = paragraph.style
    style_name = (style.name or "") if style is not None else ""
    return style_name.lower().startswith(_HEADING_STYLES)


def _label(heading: str) -> str:
    return heading if len(heading) <= _MAX_LABEL_CHARS else heading[: _MAX_LABEL_CHARS - 1] + "…"


def _table_lines(table: Table) -> list[str]:
    lines: list[str] = []
    for row in table.rows:
        cells: list[str] = []
        seen: set[int] = set()
        for cell in row.cells:
            # A merged cell is returned once per grid column it spans.
            if id(cell._tc) in seen:
                continue
            seen.add(id(cell._tc))
            cells.append(" ".join(cell.text.split()))
        if any(cells):
            lines.append(" | ".join(cells))
    return lines
