"""One rule for long text on every surface: where an answer is cut, and how text is split.

An answer longer than `LONG_ANSWER_CHARS` shows its start, as many whole blocks as fit
(paragraphs, headings, list items, code blocks, tables, quotes): never a cut inside a code block
or a table, never mid-word. The cut note comes after the shown blocks, outside any of them, and
the whole answer is attached as a Markdown file (bot/following.py). Text split over several
sections, embeds or messages (`split_text`) is split between blocks too; a block longer than one
piece is split inside it as a last resort, at a line (a code block is closed and reopened with
its language), else at a space.

Slack's stream (bot/slack/stream.py), Slack without streaming (bot/slack/render.py) and
Discord's embeds (bot/discord/render.py) all cut with `cut_answer`; the terminal prints the whole
answer. Block boundaries come from markdown-it-py, the parser the browser app renders with.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import Literal

from markdown_it import MarkdownIt

LONG_ANSWER_CHARS = 12000  # beyond this, the answer shows its start and is attached whole
# While a streamed answer is further than this from the limit, it streams word by word; closer,
# only blocks that are complete (a block being written may still cross the limit).
LIVE_MARGIN = 3000

Kind = Literal["code", "table", "text"]
_FENCE_OPEN = re.compile(r"^\s*(`{3,}|~{3,})")


@dataclass(frozen=True)
class Span:
    """One block of the text and the blank lines after it: spans cover the text end to end."""

    start: int
    end: int
    kind: Kind
    opener: str = ""  # a fenced code block's first line (its fence and language)


def is_long_text(text: str) -> bool:
    return len(text) > LONG_ANSWER_CHARS


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


def spans(text: str) -> list[Span]:
    """The text's top-level blocks (a list counts each item as one), as contiguous spans."""
    line_starts = [0]
    for match in re.finditer("\n", text):
        line_starts.append(match.end())
    line_starts.append(len(text))
    starts: dict[int, tuple[Kind, str]] = {}
    for token in _parser().parse(text):
        if token.map is None or token.nesting == -1:
            continue
        top = token.level == 0 and token.type not in ("bullet_list_open", "ordered_list_open")
        item = token.level == 1 and token.type == "list_item_open"
        if not (top or item):
            continue
        line = min(token.map[0], len(line_starts) - 1)
        start = line_starts[line]
        kind: Kind = (
            "code" if token.type in ("fence", "code_block") else "table" if token.type == "table_open" else "text"
        )
        opener = text[start : line_starts[line + 1] if line + 1 < len(line_starts) else len(text)].rstrip("\n")
        starts.setdefault(start, (kind, opener if token.type == "fence" else ""))
    starts.setdefault(0, ("text", ""))
    bounds = [*sorted(starts), len(text)]
    return [Span(a, b, *starts[a]) for a, b in pairwise(bounds) if b > a]


def cut_answer(text: str, limit: int = LONG_ANSWER_CHARS, *, at_least: int = 0) -> str:
    """The start of `text` a surface shows: the whole text when it fits, else the whole blocks
    that fit in `limit` characters (and at least the first `at_least` characters, extended to the
    end of their block: what a stream has shown already cannot be taken back)."""
    if len(text) <= limit and at_least <= len(text):
        return text
    end = 0
    for span in spans(text):
        shown = len(text[: span.end].rstrip())
        if shown <= limit or span.start < at_least:
            end = span.end
        else:
            break
    if end == 0:  # the first block alone is too long: cut inside it, at a line or a space
        return split_text(text, limit)[0]
    return text[:end].rstrip()


def live_extent(text: str, limit: int = LONG_ANSWER_CHARS) -> int:
    """How much of a text still being written may be shown now, so that the final cut
    (`cut_answer`) never falls before it: all of it while it is far from the limit, else the
    complete blocks (all but the last one) that fit."""
    if len(text) <= limit - LIVE_MARGIN:
        return len(text)
    end = 0
    for span in spans(text)[:-1]:
        if len(text[: span.end].rstrip()) > limit:
            break
        end = span.end
    return end


def split_text(text: str, limit: int) -> list[str]:
    """`text` in pieces of at most `limit` characters, cut between blocks where one fits; only
    whitespace at the cuts is lost. Each piece renders on its own: a code block split over two
    pieces is closed in the first and reopened, with its language, in the next."""
    if limit < 40:
        raise ValueError("limit too small to split sensibly")
    if len(text) <= limit:
        return [text]
    pieces: list[str] = []
    current = ""
    for span in spans(text):
        segment = text[span.start : span.end]
        if len(current) + len(segment.rstrip()) <= limit:
            current += segment
            continue
        if current.strip():
            pieces.append(current.rstrip())
        current = ""
        block = segment.rstrip()
        parts = _split_block(block, span, limit) if len(block) > limit else [block]
        pieces += [part for part in parts[:-1] if part.strip()]
        current = parts[-1] + segment[len(block) :]  # the blank lines before the next block
    if current.strip():
        pieces.append(current.rstrip())
    return pieces or [""]


def _split_block(block: str, span: Span, limit: int) -> list[str]:
    """One block longer than `limit`, in pieces: a fenced code block by lines, each piece a whole
    code block with the same opening line; any other block at paragraph, line, then word breaks."""
    fence = _FENCE_OPEN.match(span.opener) if span.kind == "code" and span.opener else None
    if fence is None:
        return _split_words(block, limit)
    marker, opener = fence.group(1), span.opener.strip()
    lines = block.split("\n")[1:]
    if lines and lines[-1].strip().startswith(marker):
        lines = lines[:-1]
    room = limit - len(opener) - len(marker) - 2
    pieces: list[str] = []
    body: list[str] = []
    size = 0
    for line in (part for whole in lines for part in _hard_wrap(whole, room)):
        if body and size + len(line) + 1 > room:
            pieces.append("\n".join([opener, *body, marker]))
            body, size = [], 0
        body.append(line)
        size += len(line) + 1
    pieces.append("\n".join([opener, *body, marker]))
    return pieces


def _hard_wrap(line: str, room: int) -> list[str]:
    return [line[i : i + room] for i in range(0, len(line), room)] or [""]


def _split_words(text: str, limit: int) -> list[str]:
    """Prose longer than `limit`: cut at a paragraph, else a line, else a space (a word longer
    than the limit is the only thing ever cut inside)."""
    pieces: list[str] = []
    rest = text
    while len(rest) > limit:
        window = rest[: limit + 1]
        cut = window.rfind("\n\n")
        if cut < limit // 2:
            cut = window.rfind("\n")
        if cut < limit // 2:
            cut = max(window.rfind(" "), window.rfind("\t"))
        if cut <= 0:
            cut = limit
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    return [*pieces, rest]
