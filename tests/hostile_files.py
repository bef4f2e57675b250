"""Hostile attachments of issue 28, generated (never stored in the repository): each is small
enough to upload, and each made the old readers build or walk far more than the council reads.

Used by tests/test_attachments_hostile.py (cached once per session) and bench/bench_attachments.py.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Callable, Iterable

MB = 1024 * 1024
_W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_CONTENT_TYPES = (
    b'<?xml version="1.0" encoding="UTF-8"?>'
    b'<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    b'<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    b'<Override PartName="/word/document.xml" '
    b'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
)
_RELS = (
    b'<?xml version="1.0" encoding="UTF-8"?>'
    b'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    b'<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    b'officeDocument" Target="word/document.xml"/></Relationships>'
)


def _docx(body: Iterable[bytes]) -> bytes:
    """A minimal DOCX whose document part is `body` inside <w:document><w:body>, streamed into the zip."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _RELS)
        with archive.open("word/document.xml", "w") as part:
            part.write(f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{_W_NS}"><w:body>'.encode())
            for piece in body:
                part.write(piece)
            part.write(b"</w:body></w:document>")
    return out.getvalue()


def _repeated(unit: bytes, count: int, per_write: int = 100_000) -> Iterable[bytes]:
    block = unit * per_write
    for _ in range(count // per_write):
        yield block
    yield unit * (count % per_write)


def docx_many_paragraphs(count: int = 4_500_000) -> bytes:
    """The issue's file: millions of one-letter paragraphs (157 MB unpacked, ~0.5 MB zipped)."""
    return _docx(_repeated(b"<w:p><w:r><w:t>a</w:t></w:r></w:p>", count))


def docx_empty_paragraphs(count: int = 30_000_000) -> bytes:
    """Millions of empty paragraphs: no text ever fills the budget, so every one must be parsed;
    reading it takes longer than the deadline allows (the deadline's own test)."""
    return _docx(_repeated(b"<w:p/>", count))


def docx_deep(depth: int = 100_000) -> bytes:
    """A paragraph, then XML nested `depth` elements deep."""
    return _docx(
        [
            b"<w:p><w:r><w:t>Before the deep part.</w:t></w:r></w:p>",
            *_repeated(b"<w:sdt>", depth),
            *_repeated(b"</w:sdt>", depth),
        ]
    )


def _pdf(objects: dict[int, bytes], root: int) -> bytes:
    """A PDF of numbered objects (bodies without `obj`/`endobj`) with a correct xref table."""
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    size = max(objects) + 1
    offsets = [0] * size
    for number in sorted(objects):
        offsets[number] = out.tell()
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, objects[number]))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % size)
    out.write(b"".join(b"%010d 00000 n \n" % offsets[n] for n in range(1, size)))
    out.write(b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, root, xref))
    return out.getvalue()


def _stream(data: bytes, *, compressed: bool = False) -> bytes:
    flate = b" /Filter /FlateDecode" if compressed else b""
    return b"<< /Length %d%s >>\nstream\n%s\nendstream" % (len(data), flate, data)


_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
# Inherited by every page from the root of the page tree.
_PAGE_DEFAULTS = b"/MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >>"


def pdf_many_pages(pages: int = 100_000, per_node: int = 1000) -> bytes:
    """`pages` pages of one short line each, in a two-level page tree (per_node pages a node)."""
    catalog, root, font, content = 1, 2, 3, 4
    objects = {
        catalog: b"<< /Type /Catalog /Pages 2 0 R >>",
        font: _FONT,
        content: _stream(b"BT /F1 12 Tf 72 720 Td (A page of a very long report.) Tj ET"),
    }
    nodes = range(5, 5 + (pages + per_node - 1) // per_node)
    first_page = nodes.stop
    for index, node in enumerate(nodes):
        kids = range(first_page + index * per_node, first_page + min(pages, (index + 1) * per_node))
        objects[node] = b"<< /Type /Pages /Parent 2 0 R /Count %d /Kids [%s] >>" % (
            len(kids),
            b" ".join(b"%d 0 R" % kid for kid in kids),
        )
        for kid in kids:
            objects[kid] = b"<< /Type /Page /Parent %d 0 R /Contents 4 0 R >>" % node
    objects[root] = (
        b"<< /Type /Pages /Count %d /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Kids [%s] >>"
        % (
            pages,
            b" ".join(b"%d 0 R" % node for node in nodes),
        )
    )
    return _pdf(objects, catalog)


def _zlib_of_repeats(head: bytes, unit: bytes, repeats: int) -> bytes:
    """zlib data of `head` + `unit` * `repeats`, compressing `unit` once: each block ends with a
    full flush, so it refers to nothing before it and its compressed bytes can be repeated."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = deflate.compress(head) + deflate.flush(zlib.Z_FULL_FLUSH)
    block = deflate.compress(unit) + deflate.flush(zlib.Z_FULL_FLUSH)
    checksum = zlib.adler32(head)
    for _ in range(repeats):
        checksum = zlib.adler32(unit, checksum)
    return b"\x78\xda" + first + block * repeats + deflate.flush() + checksum.to_bytes(4, "big")


def pdf_inflating(inflated: int = 1024 * MB) -> bytes:
    """Page 1's content stream inflates to `inflated` bytes (1 GB from ~1 MB); page 2 is ordinary."""
    unit = b" " * (16 * MB)
    content = _zlib_of_repeats(b"BT /F1 12 Tf 72 720 Td (The inflating page.) Tj ET\n", unit, inflated // len(unit))
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Count 2 %s /Kids [5 0 R 6 0 R] >>" % _PAGE_DEFAULTS,
        3: _FONT,
        4: _stream(content, compressed=True),
        5: b"<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>",
        6: b"<< /Type /Page /Parent 2 0 R /Contents 7 0 R >>",
        7: _stream(b"BT /F1 12 Tf 72 720 Td (The page after it.) Tj ET"),
    }
    return _pdf(objects, 1)


def text_one_line(size: int = 20 * MB) -> bytes:
    """One line of `size` bytes (the per-file upload limit), no newline anywhere."""
    return (b"word " * (size // 5 + 1))[:size]


def csv_columns(columns: int = 1_000_000) -> bytes:
    """A CSV header of a million columns (one 6.9 MB line)."""
    return b",".join(b"c%d" % n for n in range(columns)) + b"\n"


# name -> generator: the six hostile files.
HOSTILE: dict[str, Callable[[], bytes]] = {
    "paragraphs.docx": docx_many_paragraphs,
    "deep.docx": docx_deep,
    "pages.pdf": pdf_many_pages,
    "inflating.pdf": pdf_inflating,
    "one-line.txt": text_one_line,
    "columns.csv": csv_columns,
}
