"""Running totals the leaderboard reads (tables of migrations/0004_leaderboard_totals.sql).

A council's contribution (its ballots, and per model its answers, places and call costs) is added
in the same transaction that stores the council and subtracted in the one that replaces or prunes
it, so the totals always equal what the stored rows say. The migration's SQL builds the same
totals from rows written before it; tests/test_storage.py checks the two agree.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, fields
from typing import Any

from core.models import CouncilResult, Origin
from core.storage.database import Transaction
from core.storage.values import dumps


@dataclass
class ModelTotals:
    councils: int = 0
    answers: int = 0
    failures: int = 0
    latency_sum: float = 0.0
    latency_n: int = 0
    places: int = 0
    first_places: int = 0
    rank_sum: float = 0.0
    rank_n: int = 0
    cost_sum: float = 0.0
    cost_n: int = 0


_COLUMNS = [f.name for f in fields(ModelTotals)]


@dataclass
class Contribution:
    ballots: Counter[str]  # ballot JSON text -> times cast
    models: dict[str, ModelTotals]

    @property
    def has_ballot(self) -> bool:
        return bool(self.ballots)


def contribution(result: CouncilResult) -> Contribution:
    models: dict[str, ModelTotals] = {}

    def of(model: str) -> ModelTotals:
        return models.setdefault(model, ModelTotals())

    def cost(model: str, value: float | None) -> None:
        if value is not None:
            of(model).cost_sum += value
            of(model).cost_n += 1

    for model in {a.model for a in result.answers} | {f.model for a in result.answers for f in a.attempts}:
        of(model).councils += 1
    for a in result.answers:
        t = of(a.model)
        t.answers += 1
        t.failures += a.error is not None
        if a.latency_s is not None:
            t.latency_sum += a.latency_s
            t.latency_n += 1
        cost(a.model, a.usage.cost_usd)
        for failed in a.attempts:  # a seat's model that failed before its fallback answered
            of(failed.model).answers += 1
            of(failed.model).failures += 1
    ballots: Counter[str] = Counter()
    for r in result.reviews:
        cost(r.reviewer, r.usage.cost_usd)
        if r.ballot_models:
            ballots[dumps(r.ballot_models)] += 1
    if result.aggregate:
        for e in result.aggregate.entries:
            t = of(e.model)
            t.places += 1
            t.first_places += e.position == 1 and e.average_rank is not None
            if e.average_rank is not None:
                t.rank_sum += e.average_rank
                t.rank_n += 1
    if result.synthesis:
        cost(result.synthesis.model, result.synthesis.usage.cost_usd)
    return Contribution(ballots, models)


def _scope(origin: Origin) -> dict[str, Any]:
    return {
        "platform": origin.platform.value,
        "workspace_id": origin.workspace_id or "",
        "channel_id": origin.channel_id or "",
    }


async def apply(tx: Transaction, result: CouncilResult, sign: int) -> None:
    """Add (`sign` 1) or subtract (-1) `result`'s contribution to the totals."""
    part = contribution(result)
    scope = _scope(result.request.origin)
    await tx.executemany(
        """INSERT INTO ballot_counts (platform, workspace_id, channel_id, ballot, ballots)
           VALUES (:platform, :workspace_id, :channel_id, :ballot, :ballots)
           ON CONFLICT (platform, workspace_id, channel_id, ballot)
           DO UPDATE SET ballots = ballot_counts.ballots + excluded.ballots""",
        [{**scope, "ballot": ballot, "ballots": sign * n} for ballot, n in sorted(part.ballots.items())],
    )
    if part.has_ballot:
        await tx.execute(
            """INSERT INTO ballot_councils (platform, workspace_id, channel_id, councils)
               VALUES (:platform, :workspace_id, :channel_id, :councils)
               ON CONFLICT (platform, workspace_id, channel_id)
               DO UPDATE SET councils = ballot_councils.councils + excluded.councils""",
            {**scope, "councils": sign},
        )
    if part.models:
        updates = ", ".join(f"{c} = model_totals.{c} + excluded.{c}" for c in _COLUMNS)
        await tx.executemany(
            f"""INSERT INTO model_totals (platform, workspace_id, channel_id, model, {", ".join(_COLUMNS)})
                VALUES (:platform, :workspace_id, :channel_id, :model, {", ".join(":" + c for c in _COLUMNS)})
                ON CONFLICT (platform, workspace_id, channel_id, model) DO UPDATE SET {updates}""",
            [
                {**scope, "model": model, **{c: sign * getattr(t, c) for c in _COLUMNS}}
                for model, t in sorted(part.models.items())
            ],
        )
    if sign < 0:  # what a pruned history no longer has
        await tx.execute("DELETE FROM ballot_counts WHERE ballots <= 0")
        await tx.execute("DELETE FROM ballot_councils WHERE councils <= 0")
        await tx.execute("DELETE FROM model_totals WHERE answers <= 0 AND places <= 0 AND cost_n <= 0")
