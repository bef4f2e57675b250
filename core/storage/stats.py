"""What the leaderboard reads: stored ballots and per-model statistics."""

from __future__ import annotations

import json

from core.models import BallotCounts, BallotOrders, ModelStats
from core.storage.database import Database
from core.storage.values import filters


class StatsRepository:
    def __init__(self, db: Database):
        self._db = db

    async def ballot_orders(self, *, platform=None, workspace_id=None, channel_id=None) -> BallotOrders:
        """Every non-empty parsed ballot (model ids, best first), oldest council first and in review
        order within a council, so that the leaderboard's seeded bootstrap is repeatable."""
        where, params = filters(platform, workspace_id, channel_id, prefix="c.")
        source = f"reviews r JOIN councils c ON c.id = r.council_id WHERE {where} AND r.ballot_models != '[]'"
        rows = await self._db.fetchall(
            f"SELECT r.ballot_models FROM {source} ORDER BY c.created_at, c.id, r.position", params
        )
        councils = (await self._db.fetchall(f"SELECT COUNT(DISTINCT r.council_id) FROM {source}", params))[0][0]
        # One JSON document for all ballots: decoding (and validating) them row by row cost more
        # than the query; the rows were validated when they were written.
        orders = json.loads("[" + ",".join([row[0] for row in rows]) + "]")
        return BallotOrders.model_construct(orders=orders, councils=councils)

    async def reviewer_ballots(
        self, *, platform=None, workspace_id=None, channel_id=None
    ) -> list[tuple[str, str, list[str]]]:
        """(council id, reviewer, its ballot's model ids best first) of every non-empty parsed
        ballot, oldest council first."""
        where, params = filters(platform, workspace_id, channel_id, prefix="c.")
        rows = await self._db.fetchall(
            "SELECT r.council_id, r.reviewer, r.ballot_models FROM reviews r JOIN councils c ON c.id = r.council_id "
            f"WHERE {where} AND r.ballot_models != '[]' ORDER BY c.created_at, c.id, r.position",
            params,
        )
        return [(row[0], row[1], json.loads(row[2])) for row in rows]

    async def ballot_counts(self, *, platform=None, workspace_id=None, channel_id=None) -> BallotCounts:
        """Each distinct non-empty ballot (model ids, best first) with how often it was cast, in a
        fixed order, from the running totals (a few hundred rows however long the history)."""
        where, params = filters(platform, workspace_id, channel_id)
        rows = await self._db.fetchall(
            f"SELECT ballot, SUM(ballots) FROM ballot_counts WHERE {where} GROUP BY ballot ORDER BY ballot", params
        )
        councils = await self._db.fetchall(
            f"SELECT COALESCE(SUM(councils), 0) FROM ballot_councils WHERE {where}", params
        )
        return BallotCounts(
            orders=[json.loads(r[0]) for r in rows], counts=[int(r[1]) for r in rows], councils=int(councils[0][0])
        )

    async def model_stats(self, *, platform=None, workspace_id=None, channel_id=None) -> dict[str, ModelStats]:
        """Per model: councils it was a member of, failed answers, stage-1 mean latency, cost of all its
        calls (answers, reviews, syntheses), first places and mean of its average rank in aggregates
        (from the running totals)."""
        where, params = filters(platform, workspace_id, channel_id)
        columns = ", ".join(f"SUM({c})" for c in _TOTALS)
        stats: dict[str, ModelStats] = {}
        for row in await self._db.fetchall(
            f"SELECT model, {columns} FROM model_totals WHERE {where} GROUP BY model ORDER BY model", params
        ):
            t = dict(zip(_TOTALS, row[1:]))
            if not (t["answers"] or t["places"] or t["cost_n"]):
                continue
            entry = stats[row[0]] = ModelStats(model=row[0])
            if t["answers"]:
                entry.councils, entry.failures = int(t["councils"]), int(t["failures"])
                entry.average_latency_s = t["latency_sum"] / t["latency_n"] if t["latency_n"] else None
            if t["places"]:
                entry.first_places = int(t["first_places"])
                entry.mean_average_rank = t["rank_sum"] / t["rank_n"] if t["rank_n"] else None
            if t["cost_n"]:
                entry.cost_usd = t["cost_sum"]
        return stats


_TOTALS = [
    "councils",
    "answers",
    "failures",
    "latency_sum",
    "latency_n",
    "places",
    "first_places",
    "rank_sum",
    "rank_n",
    "cost_sum",
    "cost_n",
]
