"""Plain lines every interface shows alike (Slack, Discord, terminal, export): what the council read
besides the question, a minority view, the rubric scores and their consensus. Renderers escape them
for their platform."""

from __future__ import annotations

import re

from core.models import Aggregate, CouncilRequest, CouncilResult, Disagreement, Dissent
from core.models.files import ExtractedAttachment
from core.models.search import SearchResult

_UNSAFE_NAME = re.compile(r"[<>\r\n\t]+")

# A member of a later memory batch (MemberWaiting), until it is asked: every interface's progress.
WAITING_FOR_MEMORY = "waiting for memory"


def safe_file_name(name: str) -> str:
    """A file name fit for a fence marker and a one-line notice (no brackets, no line breaks)."""
    return _UNSAFE_NAME.sub(" ", name).strip()[:200] or "unnamed file"


def files_notice(lines: list[str]) -> str:
    """The private note to the asker about files not read or cut (`AttachmentBatch.user_notices()`)."""
    return "About your files (only you can see this):\n" + "\n".join(f"• {line}" for line in lines)


def file_summary(attachment: ExtractedAttachment) -> str:
    """One line per file for history, `council show`, exports: name, type, size (and pages)."""
    pages = f", {attachment.page_count} page(s)" if attachment.page_count else ""
    return f"{safe_file_name(attachment.name)} ({attachment.media_type}, {_size(attachment.size)}{pages})"


def source_line(number: int, source: SearchResult) -> str:
    date = f" ({source.published.isoformat()})" if source.published else ""
    return f"[{number}] {source.title}{date}: {source.url}"


def read_lines(request: CouncilRequest) -> list[str]:
    """What the council read besides the question, as plain lines (empty when nothing)."""
    lines = [f"File: {file_summary(a)}" for a in request.attachments]
    lines += [f"Source {source_line(i, s)}" for i, s in enumerate(request.sources, 1)]
    return lines


def _size(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB"
    if size >= 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size} B"


def dissent_line(d: Dissent) -> str:
    """The minority view as one plain line (renderers escape it for their platform)."""
    place = f", placed {d.place} overall" if d.place is not None else ""
    label = f"Response {d.preferred_label} ({d.preferred})" if d.preferred_label else d.preferred
    why = f": “{d.reason}”" if d.reason else ""
    return f"Minority view: {d.reviewer} preferred {label}{place}{why}"


def dissent_lines(aggregate: Aggregate | None) -> list[str]:
    return [dissent_line(d) for d in aggregate.dissent] if aggregate is not None else []


# Consensus of the rubric scores (0-100, rust/ranking/src/scores.rs) below which it is called low
# and the chairman is asked to address the disagreements (core/engine/chair_prompt.py).
LOW_CONSENSUS = 60.0
HIGH_CONSENSUS = 80.0


def consensus_text(aggregate: Aggregate | None) -> str | None:
    """`consensus 72/100 (moderate)`, shown beside Kendall's W; None without rubric scores."""
    if aggregate is None or aggregate.consensus is None:
        return None
    c = aggregate.consensus
    word = "high" if c >= HIGH_CONSENSUS else "moderate" if c >= LOW_CONSENSUS else "low"
    return f"consensus {c:.0f}/100 ({word})"


def score_line(model: str, means: dict[str, float]) -> str:
    """One answer's mean rubric scores: `model: accuracy 8.0 · insight 7.5`."""
    return f"{model}: " + " · ".join(f"{criterion} {value:.1f}" for criterion, value in means.items())


def score_lines(aggregate: Aggregate | None) -> list[str]:
    return [score_line(m, v) for m, v in aggregate.scores.items() if v] if aggregate is not None else []


METER_CELLS = 10
CHAIRMAN_SHARE = "chairman"  # the chairman's own share (core/engine/composition.py)


def composition_line(composition: dict[str, float] | None, stand_in: str | None = None) -> str | None:
    """The composition meter: `Composition ███████░░░ alpha 46% · beta 22% · sources 2% · chairman's own 30%`.
    The filled cells are what came from the council's texts, the empty ones the writer's own: the
    chairman's, or (`stand_in`: the member that wrote the answer for a chairman that failed) that
    member's, its stage-1 answer included."""
    if not composition:
        return None
    own_key = stand_in if stand_in is not None and CHAIRMAN_SHARE not in composition else CHAIRMAN_SHARE
    own = composition.get(own_key, 0.0)
    filled = round((1 - own) * METER_CELLS)
    parts = [
        f"{name} {share:.0%}"
        for name, share in sorted(composition.items(), key=lambda item: -item[1])
        if name != own_key and share >= 0.005
    ]
    parts.append(f"{'chairman' if own_key == CHAIRMAN_SHARE else own_key}'s own {own:.0%}")
    return f"Composition {'█' * filled}{'░' * (METER_CELLS - filled)} " + " · ".join(parts)


def result_composition_line(result: CouncilResult) -> str | None:
    """The meter of a result, naming the stand-in's own share as its own."""
    synthesis = result.synthesis
    return composition_line(result.composition, synthesis.model if synthesis and synthesis.stood_in else None)


# Where the members stand (core/models/disagreement.py): the title of the folded section every
# interface shows, each part's heading, and the line that says which parts were written, which measured.
DIFFER_TITLE = "Where they differ"
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
    return f"{measured_text[0].upper()}{measured_text[1:]}: {writer} wrote no account of it."


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
