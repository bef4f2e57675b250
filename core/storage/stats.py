"""What the leaderboard reads: stored ballots and per-model statistics."""

from __future__ import annotations

import json

from core.models import BallotOrders, ModelStats
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

    async def model_stats(self, *, platform=None, workspace_id=None, channel_id=None) -> dict[str, ModelStats]:
        """Per model: councils it was a member of, failed answers, stage-1 mean latency, cost of all its
        calls (answers, reviews, syntheses), first places and mean of its average rank in aggregates."""
        where, params = filters(platform, workspace_id, channel_id, prefix="c.")

        # Without a filter every row counts: skipping the join to councils halves these scans.
        def scope(table: str) -> str:
            return (
                f"{table} JOIN councils c ON c.id = {table.split()[-1]}.council_id WHERE {where}" if params else table
            )

        stats: dict[str, ModelStats] = {}
        for r in await self._db.fetchall(
            f"""SELECT a.model, COUNT(DISTINCT a.council_id),
                       SUM(CASE WHEN a.error_kind IS NOT NULL THEN 1 ELSE 0 END), AVG(a.latency_s)
                FROM {scope("answers a")} GROUP BY a.model""",
            params,
        ):
            stats[r[0]] = ModelStats(model=r[0], councils=r[1], failures=r[2] or 0, average_latency_s=r[3])
        for r in await self._db.fetchall(
            f"""SELECT g.model, SUM(CASE WHEN g.position = 1 AND g.average_rank IS NOT NULL THEN 1 ELSE 0 END),
                       AVG(g.average_rank)
                FROM {scope("aggregates g")} GROUP BY g.model""",
            params,
        ):
            entry = stats.setdefault(r[0], ModelStats(model=r[0]))
            entry.first_places, entry.mean_average_rank = r[1] or 0, r[2]
        for r in await self._db.fetchall(
            f"""SELECT calls.model, SUM(calls.cost_usd) FROM (
                    SELECT council_id, model, cost_usd FROM answers
                    UNION ALL SELECT council_id, reviewer, cost_usd FROM reviews
                    UNION ALL SELECT council_id, model, cost_usd FROM synthesis
                ) AS {scope("calls")} GROUP BY calls.model""",
            params,
        ):
            if r[1] is not None:
                stats.setdefault(r[0], ModelStats(model=r[0])).cost_usd = r[1]
        return stats
