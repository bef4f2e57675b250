"""Reading stored councils: one result, history, exports, the leaderboard and usage."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal, TypedDict

from core.channels.permissions import Permissions
from core.errors import InputRejected, NotFound
from core.models import (
    CouncilResult,
    CouncilSummary,
    DailyUsage,
    Leaderboard,
    LeaderboardRow,
    ModelStats,
    Origin,
    SeatModelStats,
    SeatStats,
    UnfinishedCouncil,
)
from core.models.browse import HeadToHead
from core.models.seats import seat_models
from core.records import bias
from core.records.agreement import agreement as ballot_agreement
from core.records.export import to_json, to_markdown
from core.records.feedback import FeedbackStore
from core.storage import Storage

if TYPE_CHECKING:
    from core.ranking import Rating

MIN_ID_PREFIX = 4  # as git: shorter starts match too much to mean one council
ID_PREFIX = re.compile(rf"[0-9a-f]{{{MIN_ID_PREFIX},}}")  # council ids are hex (models.new_council_id)

HistoryScope = Literal["channel", "workspace", "user", "all"]


class PlaceFilters(TypedDict, total=False):
    """Storage filters for where councils were asked (absent or None: anywhere)."""

    platform: str | None
    workspace_id: str | None
    channel_id: str | None


class HistoryFilters(PlaceFilters, total=False):
    user_id: str | None  # who asked


class CouncilQueries:
    def __init__(self, storage: Storage, permissions: Permissions) -> None:
        self.storage = storage
        self.permissions = permissions
        self.feedback = FeedbackStore(storage)  # readers' votes, shown with what is read here

    async def get_result(self, council_id: str, *, by_prefix: bool = False) -> CouncilResult:
        """A stored council; `by_prefix`: a unique start of its id will do, as with git (the CLI,
        which owns the database: chat users get exact ids from buttons and links)."""
        wanted = council_id.strip()
        result = await self.storage.councils.get(wanted)
        if result is None and by_prefix:
            result = await self.storage.councils.get(await self._unique_id(wanted))
        if result is None:
            raise NotFound(f"No council with id `{council_id}`.")
        return result

    async def _unique_id(self, prefix: str) -> str:
        prefix = prefix.lower()
        if not ID_PREFIX.fullmatch(prefix):
            raise NotFound(
                f"No council with id `{prefix}` (a start of an id needs {MIN_ID_PREFIX} or more hex digits)."
            )
        ids = await self.storage.councils.ids_starting_with(prefix, limit=2)
        if not ids:
            raise NotFound(f"No council with id `{prefix}`.")
        if len(ids) > 1:
            raise InputRejected(f"`{prefix}` starts more than one council's id: give more of it.")
        return ids[0]

    async def history(
        self, origin: Origin | None = None, scope: HistoryScope = "channel", limit: int = 10
    ) -> list[CouncilSummary]:
        filters: HistoryFilters = {**_place_filters(origin, scope)}
        if origin is not None and scope == "user":
            filters["user_id"] = origin.user_id
        summaries = await self.storage.councils.history(limit=max(1, min(limit, 100)), **filters)
        tallies = await self.feedback.tallies(s.council_id for s in summaries)
        for summary in summaries:
            summary.votes_good, summary.votes_bad = tallies.get(summary.council_id, (0, 0))
        return summaries

    async def unfinished(
        self, origin: Origin | None = None, scope: HistoryScope = "channel", limit: int = 10
    ) -> list[UnfinishedCouncil]:
        """The councils of `history`'s scope that have not finished: running, or interrupted (read
        only: storing an interrupted council as failed is the next live process's job)."""
        filters: HistoryFilters = {**_place_filters(origin, scope)}
        if origin is not None and scope == "user":
            filters["user_id"] = origin.user_id
        return await self.storage.councils.unfinished(limit=max(1, min(limit, 100)), **filters)

    async def result_for(self, council_id: str, viewer: Origin, *, admin: bool = False) -> CouncilResult:
        """A stored council as a chat user sees it (stage buttons, exports)."""
        result = await self.get_result(council_id)
        self.permissions.require_visible(result, viewer, admin=admin)
        return result

    async def export(
        self,
        council_id: str,
        fmt: Literal["markdown", "json"] = "markdown",
        *,
        viewer: Origin | None = None,
        admin: bool = False,
    ) -> str:
        """The council as Markdown or JSON, if `viewer` may see it (see Permissions.require_visible)."""
        result = await self.get_result(council_id, by_prefix=viewer is None)
        self.permissions.require_visible(result, viewer, admin=admin)
        votes = await self.feedback.votes(result.council_id)
        return to_json(result, votes) if fmt == "json" else to_markdown(result, votes)

    async def leaderboard(
        self,
        origin: Origin | None = None,
        scope: HistoryScope = "all",
        *,
        rounds: int = 1000,
        seats: Sequence[str] = (),
    ) -> Leaderboard:
        """Ratings from the stored ballots; `seats` (the configured ones) get their models' stored
        statistics side by side, for those with fallbacks."""
        from core.ranking import leaderboard_counted as rate

        filters = _place_filters(origin, scope)  # a user's leaderboard: the workspace's ballots
        started = time.perf_counter()
        ballots = await self.storage.stats.ballot_counts(**filters)
        shapes = [(order, n) for order, n in zip(ballots.orders, ballots.counts) if len(order) >= 2]
        orders, counts = [order for order, _ in shapes], [n for _, n in shapes]

        async def fit() -> list:
            return await asyncio.to_thread(rate, orders, counts, rounds=rounds, seed=0) if orders else []

        # The fit runs in a thread without the GIL while the database gathers the per-model statistics.
        ratings, stats, reviewers = await asyncio.gather(
            fit(), self.storage.stats.model_stats(**filters), self.storage.reviewer_totals(**filters)
        )
        rows = [_leaderboard_row(rating, stats.get(rating.model)) for rating in ratings]
        return Leaderboard(
            scope=_describe_scope(origin, scope),
            rows=rows,
            councils=ballots.councils,
            ballots=sum(counts),
            computed_s=time.perf_counter() - started,
            approval=await self.feedback.approval(**filters),
            bias=bias.audit(reviewers),
            seats=seat_stats(seats, stats),
        )

    async def head_to_head(self, origin: Origin | None = None, scope: HistoryScope = "all") -> HeadToHead:
        """Pairwise wins over the stored ballots of `scope` (the leaderboard's running totals), and
        how often two reviewers' ballots agreed."""
        place = _place_filters(origin, scope)
        ballots, cast = await asyncio.gather(
            self.storage.stats.ballot_counts(**place), self.storage.stats.reviewer_ballots(**place)
        )
        pairs: dict[tuple[str, str], int] = {}
        for order, n in zip(ballots.orders, ballots.counts):
            for i, better in enumerate(order):
                for worse in order[i + 1 :]:
                    pairs[better, worse] = pairs.get((better, worse), 0) + n
        names = {model for pair in pairs for model in pair}
        total = {m: sum(n for (better, _), n in pairs.items() if better == m) for m in names}
        models = sorted(names, key=lambda m: (-total[m], m))
        wins = [[pairs.get((a, b), 0) for b in models] for a in models]
        return HeadToHead(models=models, wins=wins, agreement=ballot_agreement(cast))

    async def usage(self, origin: Origin | None = None, days: int = 30) -> list[DailyUsage]:
        """Councils, tokens and cost per UTC day, for one channel or everything."""
        return await self.storage.councils.usage_by_day(origin.channel_key if origin else None, days)

    async def prune(self, older_than: timedelta) -> int:
        return await self.storage.prune(datetime.now(UTC) - older_than)


def _leaderboard_row(rating: Rating, st: ModelStats | None) -> LeaderboardRow:
    """One model's rating beside its stored statistics (rates per council it sat in)."""
    councils = st.councils if st else 0

    def per_council(value: float) -> float:
        return value / councils if councils else 0.0

    return LeaderboardRow(
        model=rating.model,
        rating=rating.rating,
        low=rating.low,
        high=rating.high,
        councils=councils,
        ballots=rating.comparisons,
        win_rate=per_council(st.first_places) if st else 0.0,
        average_rank=st.mean_average_rank if st else None,
        average_latency_s=st.average_latency_s if st else None,
        failure_rate=per_council(st.failures) if st else 0.0,
        cost_per_council_usd=per_council(st.cost_usd) if st and councils and st.cost_usd else None,
    )


def seat_stats(specs: Sequence[str], stats: dict[str, ModelStats]) -> list[SeatStats]:
    """Per seat with fallbacks, each of its models' stored latency and failure rate."""
    out = []
    for spec in dict.fromkeys(specs):
        models = seat_models(spec)
        if len(models) < 2:
            continue
        rows = []
        for model in models:
            st = stats.get(model)
            rows.append(
                SeatModelStats(
                    model=model,
                    answers=st.councils if st else 0,
                    failure_rate=(st.failures / st.councils) if st and st.councils else 0.0,
                    average_latency_s=st.average_latency_s if st else None,
                )
            )
        out.append(SeatStats(seat=spec, models=rows))
    return out


def _place_filters(origin: Origin | None, scope: HistoryScope) -> PlaceFilters:
    if origin is None or scope == "all":
        return {}
    filters: PlaceFilters = {"platform": origin.platform.value}
    if origin.workspace_id:
        filters["workspace_id"] = origin.workspace_id
    if scope == "channel":
        filters["channel_id"] = origin.channel_id
    return filters


def _describe_scope(origin: Origin | None, scope: HistoryScope) -> str:
    if origin is None or scope == "all":
        return "all councils"
    if scope == "channel":
        return "this channel"
    if scope == "user":
        return "your councils"
    return "this workspace" if origin.platform.value == "slack" else "this server"
