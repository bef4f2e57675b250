"""Councils as the browser app reads and asks them (`service.browse`): history pages, one council
(stored or still running), the leaderboard and eval runs a viewer may see, and a
council asked from a form. Who may see what is Permissions' rule (core/channels/permissions.py),
the same one the chat adapters' buttons and exports follow: bot/web only says who the viewer is.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from core.channels.permissions import Permissions
from core.durable.runs import CouncilRun, CouncilRuns
from core.errors import InputRejected, NotFound
from core.models import CouncilMode, CouncilRequest, CouncilResult, Leaderboard, Origin, share_links
from core.models.browse import HeadToHead, HistoryPage, HistoryQuery, Viewer, Visibility
from core.models.eval import EvalReport, EvalRunSummary
from core.models.feedback import FeedbackVote
from core.records.export import to_json, to_markdown
from core.records.feedback import CouncilFeedback
from core.records.queries import ID_PREFIX, MIN_ID_PREFIX, CouncilQueries, HistoryScope
from core.storage import Storage
from core.storage.browse import search_words

EVAL_RUNS_SHOWN = 50


@dataclass
class CouncilView:
    """One council as a viewer opens it: its stored result, or the run still in this process (its
    events followed live), or neither when another process runs it."""

    council_id: str
    request: CouncilRequest
    result: CouncilResult | None = None
    run: CouncilRun | None = None
    votes: list[FeedbackVote] = field(default_factory=list)

    @property
    def running(self) -> bool:
        return self.result is None


@dataclass(frozen=True)
class EvalRunView:
    summary: EvalRunSummary
    report: EvalReport | None


Leaders = Callable[[Origin | None, HistoryScope], Awaitable[Leaderboard]]
Available = Callable[[Origin], Awaitable[list[str]]]


class CouncilBrowser:
    def __init__(
        self,
        storage: Storage,
        permissions: Permissions,
        queries: CouncilQueries,
        runs: CouncilRuns,
        feedback: CouncilFeedback,
        leaders: Leaders,
        available: Available,
        share_secret: str | None = None,
    ) -> None:
        self.storage, self.permissions, self.queries, self.runs = storage, permissions, queries, runs
        self.feedback, self._leaders, self._available = feedback, leaders, available
        self.share_secret = share_secret  # COUNCIL_SHARE_LINKS' key (core/models/share_links.py); None: off

    async def history(self, viewer: Viewer, query: HistoryQuery) -> HistoryPage:
        """The finished councils `viewer` may see, newest first, searched and filtered."""
        visibility = self.permissions.visibility(viewer)
        items, after = await self.storage.browse.page(visibility, query)
        tallies = await self.feedback.tallies(item.council_id for item in items)
        words = search_words(query.q)
        for item in items:
            item.votes_good, item.votes_bad = tallies.get(item.council_id, (0, 0))
            if words:
                item.snippet = snippet(words, item.question, item.preview or "")
        matches = await self.storage.browse.matches(visibility, query) if words else None
        return HistoryPage(councils=items, next=after, matches=matches)

    async def council(self, viewer: Viewer, council_id: str) -> CouncilView:
        """A council by id or a unique start of it; NotFound when there is none `viewer` may see
        (another workspace's council is not found, never forbidden)."""
        visible = self.permissions.visibility(viewer)
        return await self._view(council_id, lambda origin: self.permissions.may_view(origin, viewer), among=visible)

    async def shared(self, council_id: str, token: str) -> CouncilView:
        """The one council a share link opens, read-only, for whoever holds it (COUNCIL_SHARE_LINKS):
        the whole id and its token. A token that is not this council's, share links off, and no such
        council are the same NotFound."""
        if self.share_secret is None or not share_links.opens(self.share_secret, council_id, token):
            raise NotFound(f"No council with id `{council_id}` here.")
        return await self._view(council_id, lambda origin: True, among=None)

    async def following(self, viewer: Viewer | None, council_id: str, token: str | None = None) -> CouncilRun | None:
        """The run of a council this process runs (or has just finished: a late listener still gets
        its events); None when it runs elsewhere or is long stored. NotFound when not `viewer`'s
        (or, with a share link's `token`, when the token does not open it)."""
        if token is not None:
            view = await self.shared(council_id, token)
        elif viewer is not None:
            view = await self.council(viewer, council_id)
        else:
            raise NotFound(f"No council with id `{council_id}` here.")
        return view.run or self.runs.get(view.council_id)

    async def _view(
        self, council_id: str, may_view: Callable[[Origin], bool], *, among: Visibility | None
    ) -> CouncilView:
        """The council `may_view` lets be seen, by its id or (with `among`, the viewer's visibility) a
        unique start of it among the councils they may see: another workspace's councils are never
        found by a start of their id and never make one ambiguous."""
        wanted = council_id.strip().lower()
        run = self._running(wanted, may_view, prefix=among is not None)
        if run is not None and not run.done:
            return CouncilView(run.council_id, run.request, run=run)
        result = await self._stored(wanted)
        if (result is None or not may_view(result.request.origin)) and among is not None:
            found = await self._by_prefix(among, wanted)
            result = await self._stored(found) if found else None
        if result is None or not may_view(result.request.origin):
            stored = await self.storage.jobs.get(wanted)  # a durable council another process runs
            if stored is None or not may_view(stored.request.origin):
                raise NotFound(f"No council with id `{council_id}` here.")
            return CouncilView(stored.request.council_id, stored.request)
        return CouncilView(
            result.council_id, result.request, result=result, votes=await self.feedback.votes(result.council_id)
        )

    async def _stored(self, council_id: str) -> CouncilResult | None:
        try:
            return await self.queries.get_result(council_id)
        except NotFound:
            return None

    async def _by_prefix(self, among: Visibility, prefix: str) -> str | None:
        """The id of the one stored council of `among` whose id starts with `prefix` (None: none)."""
        if not ID_PREFIX.fullmatch(prefix):
            return None
        ids = await self.storage.browse.ids_starting_with(among, prefix, limit=2)
        if len(ids) > 1:
            raise InputRejected(f"`{prefix}` starts more than one council's id: give more of it.")
        return ids[0] if ids else None

    def _running(self, wanted: str, may_view: Callable[[Origin], bool], *, prefix: bool) -> CouncilRun | None:
        """The run `may_view` lets be seen, by its id or (`prefix`, 4 or more characters) a unique
        start of it among those."""
        exact = self.runs.get(wanted)
        if exact is not None and may_view(exact.request.origin):
            return exact
        if not prefix or len(wanted) < MIN_ID_PREFIX:
            return None
        visible = [
            run for council_id, run in self.runs.active()
            if council_id.startswith(wanted) and may_view(run.request.origin)
        ]  # fmt: skip
        return visible[0] if len(visible) == 1 else None

    async def export(self, viewer: Viewer, council_id: str, fmt: Literal["markdown", "json"]) -> str:
        """A stored council `viewer` may see, as Markdown or JSON (NotFound while it runs)."""
        view = await self.council(viewer, council_id)
        if view.result is None:
            raise NotFound("This council has not finished: export it once it has.")
        return to_json(view.result, view.votes) if fmt == "json" else to_markdown(view.result, view.votes)

    async def leaderboard(self, viewer: Viewer) -> tuple[Leaderboard, HeadToHead]:
        """Ratings and pairwise wins: everything for the operator, a signed-in person's workspace, an
        API key's own councils."""
        origin, scope = _scope(viewer)
        return await self._leaders(origin, scope), await self.queries.head_to_head(origin, scope)

    async def eval_runs(self, viewer: Viewer) -> list[EvalRunView]:
        """`council eval` runs are the operator's: shown to the operator and admins."""
        if not self.permissions.viewer_is_admin(viewer):
            return []
        views = []
        for summary in await self.storage.evals.history(EVAL_RUNS_SHOWN):
            stored = await self.storage.evals.report(summary.id)
            report = EvalReport.model_validate_json(stored) if stored else None
            views.append(EvalRunView(summary, report))
        return views

    async def models(self, viewer: Viewer) -> list[str]:
        """The models a council asked by `viewer` may seat: its channel's members and chairman."""
        return await self._available(viewer.asking_origin)

    async def check_choice(
        self, viewer: Viewer, members: Sequence[str], chairman: str | None, mode: CouncilMode | None
    ) -> None:
        """Members and chairman chosen in the ask form must be models the channel allows."""
        allowed = set(await self.models(viewer))
        unknown = [model for model in [*members, *([chairman] if chairman else [])] if model not in allowed]
        if unknown:
            raise InputRejected(f"Not a model of this council: {', '.join(unknown)}.")
        if members and len(members) < 2 and mode != "quick":
            raise InputRejected("Choose at least two members (or none for the channel's council).")


SNIPPET_CHARS = 90  # of context on each side of the first word found


def snippet(words: Sequence[str], *texts: str) -> str | None:
    """The first place one of `words` is found (as a word start: the search stems, so "volcano"
    finds "volcanoes"), with some context, from the first of `texts` that holds one; None if none."""
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + ")", re.IGNORECASE)
    for text in texts:
        found = pattern.search(text)
        if found is None:
            continue
        start, end = max(0, found.start() - SNIPPET_CHARS), min(len(text), found.end() + SNIPPET_CHARS)
        piece = " ".join(text[start:end].split())
        return ("…" if start else "") + piece + ("…" if end < len(text) else "")
    return None


def _scope(viewer: Viewer) -> tuple[Origin | None, HistoryScope]:
    if viewer.origin is None:
        return None, "all"
    return viewer.origin, "channel" if viewer.origin.channel_id else "workspace"
