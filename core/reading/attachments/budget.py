"""Cutting extracted text to the characters a question has left, with a note of what was cut."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from core.models.files import TextSection

# A cut moves back to the last whitespace when one is this close, so words are not split.
_WORD_BOUNDARY_WINDOW = 200


@dataclass(frozen=True)
class Fitted:
    sections: tuple[TextSection, ...]
    notice: str | None
    # True when a lazy source (PDF pages) was not consumed to its end.
    stopped_early: bool = False


@dataclass(frozen=True)
class Prefix:
    """The start of a document read by a reader that stops at a character count (DOCX, text).

    `complete` is False when the reader stopped before the end: its last section is then cut
    short, and what follows it was never read (`unread` names it in the notice, "the file").
    """

    sections: tuple[TextSection, ...]
    complete: bool
    unread: str = "the document"
    notices: tuple[str, ...] = ()


def fit_sections(
    name: str,
    sections: Iterable[TextSection],
    budget: int,
    *,
    limit: int,
    later_units: str = "sections",
    total_units: int | None = None,
    unread: str | None = None,
) -> Fitted:
    """Keep sections in order until `budget` characters are used; cut the one that overflows.

    `limit` is the configured per-question figure named in the notice. For lazy sources (PDF
    pages) pass `total_units` so the notice can say which pages were not read without reading them.
    `unread` ("the file") says that the source stopped reading after its last section: the
    notice then says the rest was not read instead of counting it.
    """
    kept: list[TextSection] = []
    used = 0
    iterator = iter(sections)
    for index, section in enumerate(iterator):
        room = budget - used
        if len(section.text) <= room:
            kept.append(section)
            used += len(section.text)
            continue
        cut_at = _cut_point(section.text, room)
        if cut_at > 0:
            kept.append(TextSection(label=section.label, text=section.text[:cut_at]))
        if unread is not None:
            detail = [f"the rest of {unread} was not read"]
        else:
            later = _later_units(index, iterator, later_units, total_units)
            detail = [f"{len(section.text) - cut_at:,} characters of it left out", *([later] if later else [])]
        return Fitted(tuple(kept), _overflow_notice(name, section, limit, detail), stopped_early=True)
    return Fitted(tuple(kept), None)


def fit_prefix(name: str, prefix: Prefix, budget: int, *, limit: int) -> Fitted:
    """`fit_sections` for a reader that stopped at `budget` + 1 characters (or read everything)."""
    return fit_sections(name, prefix.sections, budget, limit=limit, unread=None if prefix.complete else prefix.unread)


def _overflow_notice(name: str, section: TextSection, limit: int, detail: list[str]) -> str:
    where = f" in {section.label}" if section.label else ""
    return f"{name}: text cut at the {limit:,}-character limit for one question{where}; " + ", ".join(detail)


def _later_units(index: int, rest: Iterator[TextSection], units: str, total_units: int | None) -> str | None:
    """What follows the cut section: counted from `total_units` for lazy sources (nothing more is
    read), else from the sections still in `rest`."""
    if total_units is not None:
        later = total_units - index - 1
        return f"{later} later {units} not read" if later > 0 else None
    left = list(rest)
    if not left:
        return None
    return f"{len(left)} later {units} ({sum(len(s.text) for s in left):,} characters) left out"


def _cut_point(text: str, room: int) -> int:
    if room <= 0:
        return 0
    boundary = max(text.rfind(" ", 0, room + 1), text.rfind("\n", 0, room + 1))
    return boundary if boundary > 0 and room - boundary <= _WORD_BOUNDARY_WINDOW else room
