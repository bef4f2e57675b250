"""How many ballots the council read, and the reviews that arrived after the synthesis began (the
chairman never saw them)."""

from __future__ import annotations

from dataclasses import dataclass

from core.models.base import counted
from core.models.stages import Aggregate, CouncilResult, Review
from core.models.voice.names import short_model


def ballots_read(result: CouncilResult) -> str | None:
    """`Ballots read: 2 of 3`, over the reviews the chairman was given; None without reviews."""
    on_time = [r for r in result.reviews if not r.late]
    if not on_time:
        return None
    parsed = sum(1 for r in on_time if r.ballot_models)
    return f"Ballots read: {parsed} of {len(on_time)}"


@dataclass(frozen=True)
class LateReviews:
    """Reviews that arrived after the synthesis began: the chairman never saw them."""

    count: int
    ranking: Aggregate | None  # the ranking with them (None: it is the same as without them)


def late_reviews(result: CouncilResult) -> LateReviews | None:
    """The reviews that came after the synthesis began (a late one that failed is a notice)."""
    late = [r for r in result.reviews if r.late and r.error is None]
    if not late:
        return None
    return LateReviews(len(late), result.late_aggregate)


def late_line(result: CouncilResult) -> str | None:
    """`1 review arrived after the synthesis began; with it the ranking is 1. gamma · 2. beta ·
    3. alpha.` The ranking shown with the answer stays the one the chairman was given."""
    late = late_reviews(result)
    if late is None:
        return None
    arrived = f"{counted(late.count, 'review')} arrived after the synthesis began"
    them = "it" if late.count == 1 else "them"
    if late.ranking is None or not late.ranking.entries or result.aggregate is None:
        return f"{arrived}; the chairman did not see {them}."
    if [e.model for e in late.ranking.entries] == [e.model for e in result.aggregate.entries]:
        return f"{arrived}; with {them} the ranking is the same."
    return f"{arrived}; with {them} the ranking is {late_order(late.ranking)}."


def late_order(aggregate: Aggregate) -> str:
    """A ranking as one short line: `1. alpha · 2. beta · 3. gamma`."""
    return " · ".join(f"{e.position}. {short_model(e.model)}" for e in aggregate.entries)


def review_title(review: Review) -> str:
    """`Review by beta`, and `(after the synthesis began)` for a late one: a stage detail's heading."""
    return f"Review by {review.reviewer}{review_state(review)}"


AFTER_SYNTHESIS = " (after the synthesis began)"


def review_state(review: Review) -> str:
    """` (after the synthesis began)` for a late review, else empty (progress lines, stage details)."""
    return AFTER_SYNTHESIS if review.late else ""
