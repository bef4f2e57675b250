"""The ranking in one line, the ballot read from a review, the minority views, the rubric scores and
the composition meter."""

from __future__ import annotations

from core.models.stages import Aggregate, CouncilResult, Dissent, Review
from core.models.voice.agreement import agreement_text, consensus_text
from core.models.voice.authorship import Author, author_of
from core.models.voice.ballots import AFTER_SYNTHESIS
from core.models.voice.names import short_model


def dissent_line(d: Dissent) -> str:
    """The minority view as one plain line (renderers escape it for their platform)."""
    place = f", placed {d.place} overall" if d.place is not None else ""
    label = f"Response {d.preferred_label} ({d.preferred})" if d.preferred_label else d.preferred
    why = f": “{d.reason}”" if d.reason else ""
    return f"Minority view: {d.reviewer} preferred {label}{place}{why}"


def dissent_lines(aggregate: Aggregate | None) -> list[str]:
    return [dissent_line(d) for d in aggregate.dissent] if aggregate is not None else []


def result_dissent_lines(result: CouncilResult) -> list[str]:
    """The minority views of the chairman's ranking, then those of the reviews that came after the
    synthesis began (against the ranking with them), marked so."""
    late = {r.reviewer for r in result.reviews if r.late}
    later = result.late_aggregate.dissent if result.late_aggregate is not None else []
    return dissent_lines(result.aggregate) + [
        f"{dissent_line(d)}{AFTER_SYNTHESIS}" for d in later if d.reviewer in late
    ]


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
    stand_in = synthesis.model if synthesis is not None and author_of(synthesis) is Author.STAND_IN else None
    return composition_line(result.composition, stand_in)


def ranking_line(aggregate: Aggregate | None) -> str:
    """One compact line: `1. gpt-5.1 (1.33, 3 votes) · 2. ... · agreement W=0.78`, then a line per
    minority view (core/engine/dissent.py)."""
    if aggregate is None or not aggregate.entries:
        return "Ranking unavailable."
    if all(e.average_rank is None for e in aggregate.entries):
        return "Ranking unavailable: no reviewer's ballot could be read."
    parts = []
    for entry in aggregate.entries:
        mean = f"{entry.average_rank:.2f}" if entry.average_rank is not None else "n/a"
        votes = f"{entry.rankings_count} vote{'s' if entry.rankings_count != 1 else ''}"
        parts.append(f"{entry.position}. {short_model(entry.model)} ({mean}, {votes})")
    line = " · ".join(parts)
    if aggregate.agreement_w is not None:
        line += f" · agreement {agreement_text(aggregate.agreement_w)}"
    if (consensus := consensus_text(aggregate)) is not None:
        line += f" · {consensus}"
    return "\n".join([line, *dissent_lines(aggregate)])


def ballot_line(review: Review) -> str:
    """What the parser extracted from a review, in model ids."""
    if review.error is not None:
        return f"Review failed: {review.error.short()}"
    scores = "".join(
        f"\nScores of Response {label}: " + ", ".join(f"{c} {v:g}" for c, v in values.items())
        for label, values in review.scores.items()
    )
    if not review.ballot_models:
        return "Extracted ballot: none (no readable FINAL RANKING)" + scores
    order = " > ".join(short_model(m) for m in review.ballot_models)
    return f"Extracted ballot ({review.parse_status.value}): {order}" + scores
