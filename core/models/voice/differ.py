"""Where the members differ: the folded section's title, each part's heading and items, and who
wrote the account."""

from __future__ import annotations

from core.models.disagreement import Disagreement
from core.models.stages import CouncilResult

# The folded account of where the members stand: its title on every surface (stage buttons too).
DIFFER_TITLE = "Where they differ"


# Where the members stand (core/models/disagreement.py): the title of the folded section every
# interface shows, each part's heading, and the line that says which parts were written, which measured.
DIFFER_HEADINGS = {
    "agreed": "Every answer says",
    "contested": "Contested",
    "unique": "Only one member says",
    "open": "Still open",
}
_MEASURED_WHAT = {"agreed": "what every answer says", "unique": "what only one member says"}


def differ_parts(disagreement: Disagreement | None) -> list[tuple[str, list[str]]]:
    """Each non-empty part as (heading, plain item lines); a contested point is one line with its
    sides: `point: alpha, gamma: never; beta: briefly`."""
    if disagreement is None:
        return []
    items = {
        "agreed": list(disagreement.agreed),
        "contested": [
            f"{c.point}: " + "; ".join(f"{', '.join(s.members)}: {s.position}" for s in c.sides)
            for c in disagreement.contested
        ],
        "unique": [f"{u.member}: {u.claim}" for u in disagreement.unique],
        "open": list(disagreement.open),
    }
    return [(DIFFER_HEADINGS[part], lines) for part, lines in items.items() if lines]


def differ_source(result: CouncilResult) -> str | None:
    """Who wrote the account: `Written by chair; what only one member says measured from the answers
    (shared wording)`; None without one."""
    d = result.disagreement
    if d is None or d.empty:
        return None
    writer = result.synthesis.model if result.synthesis is not None else "the chairman"
    measured = [_MEASURED_WHAT[p] for p in d.measured if p in _MEASURED_WHAT and getattr(d, p)]
    measured_text = f"{' and '.join(measured)} measured from the answers (shared wording)" if measured else ""
    if d.written and measured_text:
        return f"Written by {writer}; {measured_text}."
    if d.written:
        return f"Written by {writer}."
    if not measured_text:
        return None
    what = " and ".join(measured)
    told = f"{what[0].upper()}{what[1:]} was measured from the answers (shared wording)"
    return f"{told}, as {writer} wrote no account of it."


def differ_lines(result: CouncilResult) -> list[str]:
    """The whole account as plain lines (terminal, exports): headings, `• ` items, the source line;
    empty when there is nothing to show."""
    parts = differ_parts(result.disagreement)
    if not parts:
        return []
    out: list[str] = []
    for heading, items in parts:
        out.append(f"{heading}:")
        out += [f"• {item}" for item in items]
    source = differ_source(result)
    return out + ([source] if source else [])
