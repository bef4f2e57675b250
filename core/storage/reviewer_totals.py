"""Running totals of each reviewer's ballots (migrations/0008_ballot_order.sql): what the bias audit
(core/records/bias.py) and the `auto` reviewer weights (core/engine/weights.py) read.

Added and subtracted with the council that holds the ballots, in its transaction (core/storage/totals.py
calls `apply`). A review counts when it recorded its ballot format (written from schema 8 on) and
has a ballot; so a council stored earlier neither adds nor removes anything.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from core.models import CouncilResult, Review
from core.storage.database import Database, Transaction
from core.storage.values import filters


@dataclass
class ReviewerTotals:
    ballots: int = 0
    first_hits: int = 0
    expected_sum: float = 0.0
    self_ballots: int = 0
    self_hits: int = 0
    self_expected_sum: float = 0.0
    len_ballots: int = 0
    len_n: int = 0
    len_sx: float = 0.0
    len_sy: float = 0.0
    len_sxx: float = 0.0
    len_syy: float = 0.0
    len_sxy: float = 0.0
    tau_sum: float = 0.0
    tau_n: int = 0

    def add(self, other: ReviewerTotals) -> None:
        for c in COLUMNS:
            setattr(self, c, getattr(self, c) + getattr(other, c))


COLUMNS = [f.name for f in fields(ReviewerTotals)]


def review_totals(review: Review, result: CouncilResult) -> ReviewerTotals | None:
    """One review's contribution, or None when it does not count (see the module doc)."""
    ballot, shown = review.ballot_labels, review.shown_labels
    if review.format is None or not ballot or not shown:
        return None
    t = ReviewerTotals(ballots=1, first_hits=int(ballot[0] == shown[0]), expected_sum=1 / len(shown))
    own = next((label for label, model in result.label_to_model.items() if model == review.reviewer), None)
    if own is not None and own in shown:
        t.self_ballots, t.self_hits, t.self_expected_sum = 1, int(ballot[0] == own), 1 / len(shown)
    lengths = {a.label: len(a.text or "") for a in result.answers if a.label}
    if len(ballot) >= 2:
        t.len_ballots, t.len_n = 1, len(ballot)
        for p, label in enumerate(ballot):
            x, y = float(lengths.get(label, 0)), p / (len(ballot) - 1)
            t.len_sx += x
            t.len_sy += y
            t.len_sxx += x * x
            t.len_syy += y * y
            t.len_sxy += x * y
    tau = result.aggregate.reviewer_tau.get(review.reviewer) if result.aggregate else None
    if tau is not None:
        t.tau_sum, t.tau_n = tau, 1
    return t


def contribution(result: CouncilResult) -> dict[str, ReviewerTotals]:
    out: dict[str, ReviewerTotals] = {}
    for review in result.reviews:
        part = review_totals(review, result)
        if part is not None:
            out.setdefault(review.reviewer, ReviewerTotals()).add(part)
    return out


async def apply(tx: Transaction, result: CouncilResult, sign: int, scope: dict[str, Any]) -> None:
    """Add (`sign` 1) or subtract (-1) `result`'s reviewers' totals in `scope`."""
    part = contribution(result)
    if part:
        updates = ", ".join(f"{c} = reviewer_totals.{c} + excluded.{c}" for c in COLUMNS)
        await tx.executemany(
            f"""INSERT INTO reviewer_totals (platform, workspace_id, channel_id, reviewer, {", ".join(COLUMNS)})
                VALUES (:platform, :workspace_id, :channel_id, :reviewer, {", ".join(":" + c for c in COLUMNS)})
                ON CONFLICT (platform, workspace_id, channel_id, reviewer) DO UPDATE SET {updates}""",
            [
                {**scope, "reviewer": reviewer, **{c: sign * getattr(t, c) for c in COLUMNS}}
                for reviewer, t in sorted(part.items())
            ],
        )
    if sign < 0:
        await tx.execute("DELETE FROM reviewer_totals WHERE ballots <= 0")


async def read(db: Database, *, platform=None, workspace_id=None, channel_id=None) -> dict[str, ReviewerTotals]:
    """Per reviewer, its totals summed over the scopes the filters select."""
    where, params = filters(platform, workspace_id, channel_id)
    columns = ", ".join(f"SUM({c})" for c in COLUMNS)
    rows = await db.fetchall(
        f"SELECT reviewer, {columns} FROM reviewer_totals WHERE {where} GROUP BY reviewer ORDER BY reviewer", params
    )
    out = {}
    for row in rows:
        totals = out[row[0]] = ReviewerTotals()
        for column, value in zip(COLUMNS, row[1:]):
            # SUM() is a Decimal on PostgreSQL: back to the dataclass's int or float
            setattr(totals, column, type(getattr(totals, column))(value))
    return out
