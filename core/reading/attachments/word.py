"""DOCX paragraphs and tables in document order, in sections split at headings, streamed.

`word/document.xml` is read with lxml's `iterparse` straight from the zip member, each element
cleared once its end is seen, and reading stops once the question's characters are there: a
document of millions of paragraphs costs the paragraphs the council reads. Nothing builds the
whole document (python-docx would, and did: 3 GB for a 446 KB file).

Tables become one line per row with cells separated by " | " (a merged cell once), which models
read well and which keeps CSV-like data aligned. Old binary .doc files are not DOCX and are
refused by `detect`; a DOCX whose parts would inflate beyond the limit is refused here.
"""

from __future__ import annotations

import io
import logging
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Literal

from lxml import etree

from core.models.files import TextSection
from core.reading.attachments.budget import Prefix
from core.reading.attachments.errors import AttachmentRefused
from core.reading.attachments.limits import format_bytes

log = logging.getLogger(__name__)

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HEADING_STYLES = ("heading", "title")
_MAX_LABEL_CHARS = 80
# More heading styles than any real document has; a styles part listing more is not trusted further.
_MAX_HEADING_STYLES = 1000
_DAMAGED = "is not a readable DOCX file (damaged or incomplete)"
_PART_DAMAGED = "damaged or incomplete"
# What a run's elements stand for besides <w:t> text, as python-docx reads them.
_RUN_MARKS = {
    f"{_W}tab": "\t",
    f"{_W}ptab": "\t",
    f"{_W}br": "\n",
    f"{_W}cr": "\n",
    f"{_W}noBreakHyphen": "-",
}
# How reading the document part ended: at its end, at the character limit, or at damage.
_Ending = Literal["end", "limit", "damaged"]


def read_docx(name: str, data: bytes, *, max_unzipped_bytes: int, max_chars: int) -> Prefix:
    """The document's sections up to `max_chars` + 1 characters; a damaged rest after some text is
    left out with the text kept (the caller's notice says the rest was not read)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            _check_unzipped_size(name, archive, max_unzipped_bytes)
            headings = _heading_styles(archive)
            with archive.open("word/document.xml") as part:
                sections, ending = _read_sections(part, headings, max_chars)
    except AttachmentRefused:
        raise
    except MemoryError:
        raise
    except Exception as exc:  # BadZipFile, KeyError, zlib.error, lxml errors on a broken package
        log.info("docx %r: cannot open: %s", name, type(exc).__name__)
        raise AttachmentRefused(name, _DAMAGED) from exc
    if not any(section.text.strip() for section in sections):
        raise AttachmentRefused(name, "has no text")
    if ending == "damaged":
        # What was read is kept; nothing after it can be read, so the rest is not "left out".
        return Prefix(sections, complete=True, notices=(f"{name}: the rest of it could not be read ({_PART_DAMAGED})",))
    return Prefix(sections, complete=ending == "end")


def _check_unzipped_size(name: str, archive: zipfile.ZipFile, limit: int) -> None:
    inflated = sum(info.file_size for info in archive.infolist())
    if inflated > limit:
        raise AttachmentRefused(name, f"would unpack to more than {format_bytes(limit)}, which is refused")


def _iterparse(source: IO[bytes], events: tuple[str, ...]) -> Iterator[tuple[str, etree._Element]]:
    # No DTD, no entities, no network, and libxml2's default limits (depth, text node size).
    return etree.iterparse(
        source, events=events, resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )


def _forget(element: etree._Element) -> None:
    """Drop an element whose end was seen, and its finished siblings: the tree stays one path deep."""
    element.clear()
    parent = element.getparent()
    if parent is not None:
        while element.getprevious() is not None:
            del parent[0]


def _heading_styles(archive: zipfile.ZipFile) -> frozenset[str]:
    """The ids of paragraph styles named "heading ..." or "title" (python-docx's rule, by name)."""
    if "word/styles.xml" not in archive.namelist():
        return frozenset()
    found: set[str] = set()
    try:
        with archive.open("word/styles.xml") as part:
            style_id: str | None = None
            for event, element in _iterparse(part, ("start", "end")):
                if event == "start" and element.tag == f"{_W}style":
                    style_id = element.get(f"{_W}styleId")
                elif event == "end" and element.tag == f"{_W}name" and style_id:
                    if (element.get(f"{_W}val") or "").lower().startswith(_HEADING_STYLES):
                        found.add(style_id)
                        if len(found) >= _MAX_HEADING_STYLES:
                            break
                if event == "end":
                    _forget(element)
    except MemoryError:
        raise
    except Exception as exc:  # a damaged styles part only loses the headings
        log.info("docx styles unreadable: %s", type(exc).__name__)
    return frozenset(found)


@dataclass
class _Sections:
    """Lines gathered into sections at headings, counting characters as `TextSection.text` will."""

    max_chars: int
    done: list[TextSection] = field(default_factory=list)
    label: str | None = None
    lines: list[str] = field(default_factory=list)
    chars: int = 0  # of `done` and of the open section, joined with "\n"

    def heading(self, text: str) -> None:
        self.close()
        self.label = text if len(text) <= _MAX_LABEL_CHARS else text[: _MAX_LABEL_CHARS - 1] + "…"
        self.line(text)

    def line(self, text: str) -> None:
        self.chars += len(text) + (1 if self.lines else 0)
        self.lines.append(text)

    def full(self) -> bool:
        return self.chars > self.max_chars

    def close(self) -> None:
        if self.lines:
            self.done.append(TextSection(label=self.label, text="\n".join(self.lines)))
        self.lines = []


@dataclass
class _Table:
    cells: list[str] = field(default_factory=list)
    cell: list[str] = field(default_factory=list)


def _read_sections(
    part: IO[bytes], headings: frozenset[str], max_chars: int
) -> tuple[tuple[TextSection, ...], _Ending]:
    """Sections until the end of the part, until `max_chars` is passed ("limit"), or until damage
    after some text ("damaged"; damage before any text raises)."""
    out = _Sections(max_chars)
    paragraphs: list[tuple[list[str], str | None]] = []  # open <w:p>s (text boxes nest them)
    tables: list[_Table] = []
    ending: _Ending = "end"
    try:
        for event, element in _iterparse(part, ("start", "end")):
            tag = element.tag
            if event == "start":
                _opened(tag, element, paragraphs, tables)
                continue
            if tag == f"{_W}t" and paragraphs:
                paragraphs[-1][0].append(element.text or "")
            elif tag in _RUN_MARKS and paragraphs:
                paragraphs[-1][0].append(_RUN_MARKS[tag])
            elif tag == f"{_W}p" and paragraphs:
                parts, style = paragraphs.pop()
                _paragraph("".join(parts).strip(), style in headings, tables, out)
            elif tag == f"{_W}tc" and tables:
                table = tables[-1]
                table.cells.append(" ".join(" ".join(table.cell).split()))
            elif tag == f"{_W}tr" and tables:
                cells, tables[-1].cells = tables[-1].cells, []
                if any(cells):
                    out.line(" | ".join(cells))
            elif tag == f"{_W}tbl" and tables:
                tables.pop()
            _forget(element)
            if out.full():
                ending = "limit"
                break
    except MemoryError:
        raise
    except Exception as exc:  # damage after the start: what was read is kept, the rest is not
        if not out.done and not out.lines:
            raise
        log.info("docx: stopped at damaged XML: %s", type(exc).__name__)
        ending = "damaged"
    out.close()
    return tuple(out.done), ending


def _opened(
    tag: str, element: etree._Element, paragraphs: list[tuple[list[str], str | None]], tables: list[_Table]
) -> None:
    """A start tag: a paragraph, its style, a table or a cell begins."""
    if tag == f"{_W}p":
        paragraphs.append(([], None))
    elif tag == f"{_W}pStyle" and paragraphs:
        paragraphs[-1] = (paragraphs[-1][0], element.get(f"{_W}val"))
    elif tag == f"{_W}tbl":
        tables.append(_Table())
    elif tag == f"{_W}tc" and tables:
        tables[-1].cell = []


def _paragraph(text: str, is_heading: bool, tables: list[_Table], out: _Sections) -> None:
    if tables:
        if text:
            tables[-1].cell.append(text)
    elif is_heading and text:
        out.heading(text)
    elif text:
        out.line(text)
