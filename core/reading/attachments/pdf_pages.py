"""A PDF's pages one at a time, reached by walking the page tree's /Kids as far as needed.

pypdf's `reader.pages` flattens the whole page tree on first use (a PDF of 90,000 empty pages
cost 10 s and 350 MB to read its first page) and refuses trees of more than 100,000 entries. The
walk here resolves only the nodes on the way to the pages asked for, so reading the first 200
pages of any PDF costs about 200 pages.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from pypdf import PageObject, PdfReader
from pypdf.errors import PdfReadError
from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject, NameObject, PdfObject

# Attributes a page inherits from its ancestors when it has none of its own (PDF 32000-1, 7.7.3.4).
_INHERITABLE = ("/Resources", "/MediaBox", "/CropBox", "/Rotate")
# Real page trees are a few levels deep; pypdf refuses more than 100.
_MAX_DEPTH = 100


@dataclass
class _Node:
    kids: Iterator[PdfObject]
    inherited: dict[str, PdfObject]


def declared_page_count(reader: PdfReader) -> int | None:
    """The page tree's own /Count, or None when it is missing or not a count."""
    count = _page_tree(reader).get("/Count")
    count = count.get_object() if count is not None else None
    return int(count) if isinstance(count, int) and count >= 0 else None


def iter_pages(reader: PdfReader) -> Iterator[PageObject]:
    """The pages in order. A node reached twice (a cycle, or a shared subtree) is walked once;
    a kid that is not a dictionary is skipped, as pypdf does."""
    root = _page_tree(reader)
    seen = {id(root)}
    stack = [_Node(_kids(root), _inherit({}, root))]
    while stack:
        node = stack[-1]
        kid = next(node.kids, None)
        if kid is None:
            stack.pop()
            continue
        obj = kid.get_object()
        if not isinstance(obj, DictionaryObject) or not obj or id(obj) in seen:
            continue
        seen.add(id(obj))
        if obj.get("/Type") == "/Pages" or ("/Type" not in obj and "/Kids" in obj):
            if len(stack) >= _MAX_DEPTH:
                raise PdfReadError("page tree too deep")
            stack.append(_Node(_kids(obj), _inherit(node.inherited, obj)))
        else:
            yield _page(reader, kid, obj, node.inherited)


def _page_tree(reader: PdfReader) -> DictionaryObject:
    pages = reader.root_object.get("/Pages")
    pages = pages.get_object() if pages is not None else None
    if not isinstance(pages, DictionaryObject):
        raise PdfReadError("no page tree")
    return pages


def _kids(node: DictionaryObject) -> Iterator[PdfObject]:
    kids = node.get("/Kids")
    kids = kids.get_object() if kids is not None else None
    return iter(kids) if isinstance(kids, ArrayObject) else iter(())


def _inherit(inherited: dict[str, PdfObject], node: DictionaryObject) -> dict[str, PdfObject]:
    own = {key: node[key] for key in _INHERITABLE if key in node}
    return {**inherited, **own} if own else inherited


def _page(reader: PdfReader, kid: PdfObject, obj: DictionaryObject, inherited: dict[str, PdfObject]) -> PageObject:
    if isinstance(kid, IndirectObject):
        page = PageObject(reader, kid)  # copies the page's own entries
    else:
        page = PageObject(reader)
        page.update(obj)
    for key, value in inherited.items():
        if key not in page:
            page[NameObject(key)] = value
    return page
