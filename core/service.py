"""CouncilService: the one API that adapters (CLI, Slack, Discord) call.

Every operation is checked here (input limits, rate limits, budget, permissions) so that no
adapter decides anything about councils. Councils run as background tasks; adapters follow
them through `CouncilRun.events()`.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

from core.attachments import (
    DISCORD_FILE_HOSTS,
    SLACK_FILE_HOSTS,
    AttachmentBatch,
    AttachmentFetcher,
    AttachmentLimits,
    ExtractedAttachment,
    IncomingFile,
    allowed_file_hosts,
    prepare_attachments,
)
from core.council import CouncilControl, run_council
from core.errors import BudgetExceeded, ConfigurationError, InputRejected, NotFound, PermissionDenied, UnknownModels
from core.export import to_json, to_markdown
from core.limits import ConcurrencyGate, RateLimiter, Ticket, validate_question
from core.material import image_notice
from core.models import (
    Actor,
    ChannelSettings,
    ConversationTurn,
    CouncilConfig,
    CouncilEvent,
    CouncilFinished,
    CouncilQueued,
    CouncilRequest,
    CouncilResult,
    CouncilStatus,
    CouncilSummary,
    DailyUsage,
    ErrorInfo,
    ErrorKind,
    Leaderboard,
    LeaderboardRow,
    MemberFailed,
    Origin,
    Platform,
    new_council_id,
)
from core.ownership import LEASE_S, CouncilOwner
from core.providers.router import ProviderRouter
from core.redact import Redactor
from core.research import find_sources
from core.search import SearchBackend, SearchConfigError, search_backend_from_settings
from core.settings import Settings, load_settings
from core.storage import Storage
from core.text import clean_text

log = logging.getLogger(__name__)

HistoryScope = Literal["channel", "workspace", "user", "all"]
MAX_MEMBERS = 8
FILES_ONLY_QUESTION = "Read the attached file(s) and tell me what matters in them."
# Who the platform itself counts as an admin (Actor.is_platform_admin), as the refusal names it.
PLATFORM_ADMINS = {
    Platform.SLACK: "Slack workspace admins and owners",
    Platform.DISCORD: "Discord members with the Manage Server permission",
}


class CouncilRun:
    """A running (or finished) council that any number of listeners can follow."""

    def __init__(self, request: CouncilRequest):
        self.request = request
        self.control = CouncilControl()
        self._events: list[CouncilEvent] = []
        self._changed = asyncio.Condition()
        self._result: CouncilResult | None = None
        self.task: asyncio.Task[None] | None = None
        self.queued_position: int | None = None  # its place in the queue when admitted; None: ran at once
        self.ticket: Ticket | None = None  # its admission (a slot, or a place in the queue)
        self.search = False  # search the web once before stage 1
        self.notices: list[str] = []  # about what the council read (search, images): added to the result

    @property
    def council_id(self) -> str:
        return self.request.council_id

    @property
    def done(self) -> bool:
        return self._result is not None

    async def publish(self, event: CouncilEvent) -> None:
        async with self._changed:
            self._events.append(event)
            if isinstance(event, CouncilFinished):
                self._result = event.result
            self._changed.notify_all()

    async def events(self) -> AsyncIterator[CouncilEvent]:
        """Every event from the start (late listeners get a replay), ending with CouncilFinished."""
        index = 0
        while True:
            async with self._changed:
                await self._changed.wait_for(lambda: len(self._events) > index)
                batch = self._events[index:]
            for event in batch:
                yield event
                if isinstance(event, CouncilFinished):
                    return
            index += len(batch)

    async def wait(self) -> CouncilResult:
        async with self._changed:
            await self._changed.wait_for(lambda: self._result is not None)
        assert self._result is not None
        return self._result


class CouncilService:
    def __init__(self, settings: Settings, storage: Storage, router: ProviderRouter, *, lease_s: float = LEASE_S):
        self.settings = settings
        self.storage = storage
        self.router = router
        self.redact = Redactor.from_settings(settings)
        self.limiter = RateLimiter(storage)
        self.gate = ConcurrencyGate(settings.max_concurrent_councils, settings.max_queued_councils)
        # Taken when this process first runs a council (or a bot starts): read-only uses never own.
        self.owner = CouncilOwner(storage, lease_s)
        self._runs: dict[str, CouncilRun] = {}
        self._pruner: asyncio.Task[None] | None = None
        self._search_backend: SearchBackend | None = None

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    async def open(
        cls, settings: Settings | None = None, *, router: ProviderRouter | None = None, lease_s: float = LEASE_S
    ) -> CouncilService:
        """Open the database. Nothing is marked here: councils other processes run are theirs, and
        those of dead processes are marked by the first process that runs councils (`start_lease`)."""
        settings = settings or load_settings()
        storage = await _open_storage(settings)
        service = cls(settings, storage, router or ProviderRouter(settings), lease_s=lease_s)
        if settings.retention_days:
            await service.prune(timedelta(days=settings.retention_days))
            # Bots run for months: keep pruning daily, not only at start-up.
            service._pruner = asyncio.create_task(service._prune_daily(timedelta(days=settings.retention_days)))
        return service

    async def _prune_daily(self, age: timedelta) -> None:
        while True:
            await asyncio.sleep(86400)
            try:
                removed = await self.prune(age)
                log.info("retention: pruned %d council(s) older than %s", removed, age)
            except Exception:
                log.exception("retention pruning failed; will retry tomorrow")

    async def aclose(self) -> None:
        if self._pruner is not None:
            self._pruner.cancel()
        for run in list(self._runs.values()):
            if run.task and not run.task.done():
                run.control.stop()
        pending = [r.task for r in self._runs.values() if r.task and not r.task.done()]
        if pending:
            await asyncio.wait(pending, timeout=5)
        await self.owner.stop()
        if self._search_backend is not None:
            await self._search_backend.aclose()
        await self.router.aclose()
        await self.storage.close()

    async def __aenter__(self) -> CouncilService:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ councils

    async def start_lease(self) -> None:
        """Become an owner of councils now (bots call it at start-up, so that councils a dead
        process left running are marked at once); `start_council` does it on first use."""
        await self.owner.start()

    async def start_council(
        self,
        question: str,
        origin: Origin,
        history: Sequence[ConversationTurn] = (),
        *,
        council_id: str | None = None,
        members: Sequence[str] | None = None,
        chairman: str | None = None,
        attachments: Sequence[ExtractedAttachment] = (),
        search: bool | None = None,
        notices: Sequence[str] = (),
    ) -> CouncilRun:
        """Validate, check limits, admit and start a council in the background. `members`/`chairman`
        replace the channel's for this council only (the API's and MCP's per-request choice).
        `attachments` come from `read_files`; `search` asks for (True) or against (False) a web
        search for this question, None follows the channel (`/council-admin search`). `notices` go
        into the result (the API's files it could not read: it has no private channel).

        Admission is atomic: the council holds a running slot or its place in the queue before
        this returns, so a burst cannot over-fill the queue. Raises InputRejected, RateLimited,
        BudgetExceeded or Overloaded with a user-facing message; a refused question uses up none
        of the asker's rate limit.
        """
        if attachments and not question.strip():
            question = FILES_ONLY_QUESTION  # files shared without a word: the council reads them
        # Cleaned before anything is counted or stored: undecodable text must not cost a rate-limit hit.
        question = validate_question(self.redact(clean_text(question)), self.settings.max_question_chars)
        history = [self._clean_turn(turn) for turn in history]
        ticket = self.gate.admit()  # Overloaded here, before anything is recorded
        try:
            channel = await self.storage.get_channel_settings(origin.channel_key)
            config = await self._with_overrides(self._config_for(channel), members, chairman)
            await self._check_budget(origin, channel)
            await self._check_rate(origin, channel, record=True)
            await self.owner.start()
            request = CouncilRequest(
                council_id=council_id or new_council_id(),
                question=question,
                config=config,
                history=self._trim_history(history),
                origin=origin,
                attachments=list(attachments),
            )
            await self.storage.save_council_started(request, self.owner.owner_id)
        except BaseException:
            ticket.release()
            raise
        run = CouncilRun(request)
        run.search = _first_set(search, channel.search if channel else None, self.settings.search_default)
        run.notices.extend(notices)
        run.queued_position = ticket.position
        run.ticket = ticket
        if ticket.position is not None:
            await run.publish(CouncilQueued(council_id=run.council_id, position=ticket.position))
        self._runs[run.council_id] = run
        run.task = asyncio.create_task(self._drive(run, ticket), name=f"council-{run.council_id}")
        return run

    async def check_admission(self, question: str, origin: Origin) -> str:
        """The checks of `start_council` without their effects (no queue place, no rate-limit hit):
        an adapter that must show the question before starting asks this first. Returns the
        question as it will be asked; raises what `start_council` would."""
        question = validate_question(self.redact(clean_text(question)), self.settings.max_question_chars)
        self.gate.check_capacity()
        channel = await self.storage.get_channel_settings(origin.channel_key)
        await self._check_budget(origin, channel)
        await self._check_rate(origin, channel, record=False)
        return question

    async def _check_rate(self, origin: Origin, channel: ChannelSettings | None, *, record: bool) -> None:
        await self.limiter.check_and_record(
            user_key=origin.user_key,
            channel_key=origin.channel_key,
            user_limit_per_hour=_pick(channel and channel.user_limit_per_hour, self.settings.user_limit_per_hour),
            channel_limit_per_hour=_pick(
                channel and channel.channel_limit_per_hour, self.settings.channel_limit_per_hour
            ),
            record=record,
        )

    async def ask(
        self, question: str, origin: Origin | None = None, history: Sequence[ConversationTurn] = ()
    ) -> CouncilResult:
        run = await self.start_council(question, origin or Origin(), history)
        return await run.wait()

    def get_run(self, council_id: str) -> CouncilRun | None:
        return self._runs.get(council_id)

    async def stop(self, council_id: str, actor: Actor, *, synthesize: bool = False) -> bool:
        """Stop a running council (or make it synthesize now). Only the asker or an admin may."""
        run = self._runs.get(council_id)
        if run is None or run.done:
            return False
        if actor.user_id != run.request.origin.user_id and not self.is_admin(actor):
            raise PermissionDenied("Only the person who asked, or an admin, can stop this council.")
        if run.ticket is not None and run.ticket.waiting:
            run.control.stop()  # still queued: it leaves the queue now and never starts
            run.ticket.release()
        elif synthesize:
            run.control.synthesize_now()
        else:
            run.control.stop()
        return True

    async def _drive(self, run: CouncilRun, ticket: Ticket) -> None:
        result: CouncilResult | None = None
        try:
            if await ticket.wait() and not run.control.stopped:  # stopped while queued: it never starts
                await self._prepare_material(run)
                async for event in run_council(run.request, self.router, run.control):
                    if isinstance(event, CouncilFinished):
                        result = event.result
                        break
                    if isinstance(event, MemberFailed):
                        event = self.redact.model(event)
                    await run.publish(event)
        except Exception as exc:  # the council must always end with a stored, explained result
            log.exception("council %s crashed", run.council_id)
            message = getattr(exc, "user_message", None) or f"internal error: {type(exc).__name__}: {exc}"
            message = self.redact(message)
            result = CouncilResult(
                council_id=run.council_id,
                request=run.request,
                status=CouncilStatus.FAILED,
                error=ErrorInfo(kind=ErrorKind.UNKNOWN, message=message),
            )
        finally:
            ticket.release()
        if result is None:
            result = CouncilResult(
                council_id=run.council_id,
                request=run.request,
                status=CouncilStatus.CANCELLED,
                error=ErrorInfo(kind=ErrorKind.CANCELLED, message="The council was stopped."),
            )
        result.notices[:0] = run.notices
        # Whatever a provider or an exception quoted back, no configured secret is stored or shown.
        result = self.redact.model(result)
        try:
            await self.storage.save_result(result)
        except Exception:
            log.exception("could not store council %s", run.council_id)
            result.notices.append("This council could not be saved to history.")
        await run.publish(CouncilFinished(council_id=run.council_id, result=result))
        # Keep finished runs briefly so that late listeners (buttons) can still attach.
        asyncio.get_running_loop().call_later(600, self._runs.pop, run.council_id, None)

    # ------------------------------------------------------------------ what the council reads (issue 13)

    async def read_files(self, files: Sequence[IncomingFile], platform: Platform) -> AttachmentBatch:
        """Download (from the platform's own file hosts only) and read the files of one question.
        Never raises for a bad file: refusals and notices are in the batch, for the asker only."""
        if not files:
            return AttachmentBatch()
        limits = AttachmentLimits.from_settings(self.settings)
        fetcher = self._file_fetcher(platform, limits)
        try:
            return await prepare_attachments(files, limits=limits, fetcher=fetcher)
        finally:
            if fetcher is not None:
                await fetcher.aclose()

    def _file_fetcher(self, platform: Platform, limits: AttachmentLimits) -> AttachmentFetcher | None:
        s = self.settings
        if platform is Platform.SLACK:
            hosts = allowed_file_hosts(SLACK_FILE_HOSTS, s.slack_api_url)
            return AttachmentFetcher(
                allowed_hosts=hosts, bearer_token=s.slack_bot_token, timeout_s=limits.fetch_timeout_s
            )
        if platform is Platform.DISCORD:
            hosts = allowed_file_hosts(DISCORD_FILE_HOSTS, s.discord_api_url)
            return AttachmentFetcher(allowed_hosts=hosts, timeout_s=limits.fetch_timeout_s)
        return None  # the CLI and the API pass the bytes themselves

    async def _prepare_material(self, run: CouncilRun) -> None:
        """Before stage 1: which models see the images, and the web search; failures become notices."""
        request = run.request
        if any(a.kind == "image" for a in request.attachments):
            readers = [*request.config.members, request.config.chairman]
            request.image_members = sorted(await self.router.image_models(readers))
            notice = image_notice(request)
            if notice:
                run.notices.append(notice)
        if not run.search:
            return
        backend = self._search()
        if isinstance(backend, str):
            run.notices.append(backend)
            return
        outcome = await find_sources(backend, request, self.router, max_results=self.settings.search_results)
        request.sources = outcome.sources
        run.notices.extend(self.redact(notice) for notice in outcome.notices)

    def _search(self) -> SearchBackend | str:
        """The configured backend (built once), or the notice saying why there is none."""
        if self._search_backend is None:
            try:
                self._search_backend = search_backend_from_settings(self.settings)
            except SearchConfigError as exc:
                return f"Web search is not available: {exc.message}."
            if self._search_backend is None:
                return "Web search was asked for, but no search backend is configured (COUNCIL_SEARCH=off)."
        return self._search_backend

    def _config_for(self, channel: ChannelSettings | None) -> CouncilConfig:
        s = self.settings
        members = (channel and channel.members) or s.default_members
        chairman = (channel and channel.chairman) or s.default_chairman
        return CouncilConfig(
            members=list(members),
            chairman=chairman,
            exclude_self_review=s.council_exclude_self,
            member_timeout_s=s.council_timeout_s,
            quorum=s.council_quorum,
            grace_s=s.council_grace_s,
            max_answer_tokens=s.council_max_answer_tokens,
        )

    def _clean_turn(self, turn: ConversationTurn) -> ConversationTurn:
        author = clean_text(turn.author) if turn.author is not None else None
        return turn.model_copy(update={"content": self.redact(clean_text(turn.content)), "author": author})

    async def _with_overrides(
        self, config: CouncilConfig, members: Sequence[str] | None, chairman: str | None
    ) -> CouncilConfig:
        chosen_members = _clean_members(members) if members else None
        chosen_chairman = chairman.strip() if chairman and chairman.strip() else None
        named = [*(chosen_members or []), *([chosen_chairman] if chosen_chairman else [])]
        if not named:
            return config
        await self._require_known(list(dict.fromkeys(named)))
        return config.model_copy(
            update={"members": chosen_members or config.members, "chairman": chosen_chairman or config.chairman}
        )

    def _trim_history(self, history: Sequence[ConversationTurn]) -> list[ConversationTurn]:
        """Keep the most recent turns that fit the history budget (older context matters least)."""
        budget = self.settings.max_history_chars
        kept: list[ConversationTurn] = []
        for turn in reversed(list(history)):
            if len(turn.content) > budget:
                break
            budget -= len(turn.content)
            kept.append(turn)
        return list(reversed(kept))

    async def _check_budget(self, origin: Origin, channel: ChannelSettings | None) -> None:
        budget = _pick(channel and channel.daily_budget_usd, self.settings.daily_budget_usd)
        if not budget:
            return
        day_start = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        spent = await self.storage.spent_since(origin.channel_key, day_start)
        if spent >= budget:
            raise BudgetExceeded(
                f"This channel's daily budget of ${budget:.2f} is spent (${spent:.2f} today). "
                "It resets at 00:00 UTC; an admin can raise it with the limits command.",
                retry_after_s=(day_start + timedelta(days=1) - datetime.now(UTC)).total_seconds(),
            )

    # ------------------------------------------------------------------ history

    async def claim_event(self, platform: str, event_id: str) -> bool:
        """True the first time a platform event id is seen (retries return False)."""
        return await self.storage.claim_event(platform, event_id)

    async def get_result(self, council_id: str) -> CouncilResult:
        result = await self.storage.get_result(council_id.strip())
        if result is None:
            raise NotFound(f"No council with id `{council_id}`.")
        return result

    async def history(
        self, origin: Origin | None = None, scope: HistoryScope = "channel", limit: int = 10
    ) -> list[CouncilSummary]:
        return await self.storage.list_councils(limit=max(1, min(limit, 100)), **_filters(origin, scope))

    @staticmethod
    def visible_to(result: CouncilResult, viewer: Origin, *, admin: bool = False) -> bool:
        """A council stays in the workspace (Slack team, Discord server) it was asked in; there it
        is visible from its channel, to whoever asked it, and to the workspace's admins."""
        asked = result.request.origin
        if asked.platform is not viewer.platform or asked.workspace_id != viewer.workspace_id:
            return False
        return admin or asked.channel_id == viewer.channel_id or asked.user_id == viewer.user_id

    async def export(
        self,
        council_id: str,
        fmt: Literal["markdown", "json"] = "markdown",
        *,
        viewer: Origin | None = None,
        admin: bool = False,
    ) -> str:
        """The council as Markdown or JSON. With `viewer` (the chat adapters), a council it may not
        see is reported as not found; without (the CLI, which owns the database), any council."""
        result = (
            await self.get_result(council_id) if viewer is None else await self.result_for(council_id, viewer, admin)
        )
        return to_json(result) if fmt == "json" else to_markdown(result)

    async def result_for(self, council_id: str, viewer: Origin, admin: bool = False) -> CouncilResult:
        """A stored council as a chat user sees it (stage buttons, exports): one it may not see
        (`visible_to`) is reported as not found."""
        result = await self.get_result(council_id)
        if not self.visible_to(result, viewer, admin=admin):
            raise NotFound(f"No council with id `{council_id.strip()}` here.")
        return result

    async def leaderboard(
        self, origin: Origin | None = None, scope: HistoryScope = "all", *, rounds: int = 1000
    ) -> Leaderboard:
        from core.ranking import leaderboard as rate

        filters = _filters(origin, scope)
        filters.pop("user_id", None)
        started = time.perf_counter()
        ballots = await self.storage.ballot_orders(**filters)
        orders = [order for order in ballots.orders if len(order) >= 2]

        async def fit() -> list:
            return await asyncio.to_thread(rate, orders, rounds=rounds, seed=0) if orders else []

        # The fit runs in a thread without the GIL while SQLite gathers the per-model statistics.
        ratings, stats = await asyncio.gather(fit(), self.storage.model_stats(**filters))
        rows = []
        for rating in ratings:
            st = stats.get(rating.model)
            councils = st.councils if st else 0
            rows.append(
                LeaderboardRow(
                    model=rating.model,
                    rating=rating.rating,
                    low=rating.low,
                    high=rating.high,
                    councils=councils,
                    ballots=rating.comparisons,
                    win_rate=(st.first_places / councils) if st and councils else 0.0,
                    average_rank=st.mean_average_rank if st else None,
                    average_latency_s=st.average_latency_s if st else None,
                    failure_rate=(st.failures / councils) if st and councils else 0.0,
                    cost_per_council_usd=(st.cost_usd / councils) if st and councils and st.cost_usd else None,
                )
            )
        return Leaderboard(
            scope=_describe_scope(origin, scope),
            rows=rows,
            councils=ballots.councils,
            ballots=len(orders),
            computed_s=time.perf_counter() - started,
        )

    async def usage(self, origin: Origin | None = None, days: int = 30) -> list[DailyUsage]:
        """Councils, tokens and cost per UTC day, for one channel or everything."""
        return await self.storage.usage_by_day(origin.channel_key if origin else None, days)

    async def prune(self, older_than: timedelta) -> int:
        return await self.storage.prune(datetime.now(UTC) - older_than)

    # ------------------------------------------------------------------ admin

    def is_admin(self, actor: Actor) -> bool:
        return actor.is_platform_admin or actor.user_id in self.settings.admin_users

    def _require_admin(self, actor: Actor, platform: Platform) -> None:
        if not self.is_admin(actor):
            admins = [*filter(None, [PLATFORM_ADMINS.get(platform)]), "users listed in COUNCIL_ADMIN_USERS"]
            raise PermissionDenied(f"Only admins can change the council: {' and '.join(admins)}.")

    async def effective_config(self, origin: Origin) -> CouncilConfig:
        return self._config_for(await self.storage.get_channel_settings(origin.channel_key))

    async def channel_settings(self, origin: Origin) -> ChannelSettings:
        found = await self.storage.get_channel_settings(origin.channel_key)
        return found or ChannelSettings(channel_key=origin.channel_key)

    async def admin_set_members(self, actor: Actor, origin: Origin, members: Sequence[str]) -> CouncilConfig:
        self._require_admin(actor, origin.platform)
        cleaned = _clean_members(members)
        await self._require_known(cleaned)
        current = await self.channel_settings(origin)
        await self._save_channel(
            actor, current.model_copy(update={"members": cleaned}), "set_members", {"members": cleaned}
        )
        return await self.effective_config(origin)

    async def admin_set_chairman(self, actor: Actor, origin: Origin, chairman: str) -> CouncilConfig:
        self._require_admin(actor, origin.platform)
        chairman = chairman.strip()
        if not chairman:
            raise InputRejected("Name the chairman's model id.")
        await self._require_known([chairman])
        current = await self.channel_settings(origin)
        await self._save_channel(
            actor, current.model_copy(update={"chairman": chairman}), "set_chairman", {"chairman": chairman}
        )
        return await self.effective_config(origin)

    async def admin_set_limits(
        self,
        actor: Actor,
        origin: Origin,
        *,
        user_per_hour: int | None = None,
        channel_per_hour: int | None = None,
        daily_budget_usd: float | None = None,
    ) -> ChannelSettings:
        self._require_admin(actor, origin.platform)
        update: dict[str, object] = {}
        for name, value in (
            ("user_limit_per_hour", user_per_hour),
            ("channel_limit_per_hour", channel_per_hour),
            ("daily_budget_usd", daily_budget_usd),
        ):
            if value is None:
                continue
            if value < 0:
                raise InputRejected(f"{name.replace('_', ' ')} cannot be negative.")
            update[name] = value
        if not update:
            raise InputRejected("Give at least one of: user=N, channel=N (councils per hour), budget=USD (per day).")
        current = await self.channel_settings(origin)
        updated = current.model_copy(update=update)
        await self._save_channel(actor, updated, "set_limits", update)
        return updated

    async def admin_set_search(self, actor: Actor, origin: Origin, enabled: bool) -> ChannelSettings:
        """Turn web search before stage 1 on or off for the channel's councils."""
        self._require_admin(actor, origin.platform)
        current = await self.channel_settings(origin)
        updated = current.model_copy(update={"search": enabled})
        await self._save_channel(actor, updated, "set_search", {"search": enabled})
        return updated

    async def admin_reset(self, actor: Actor, origin: Origin) -> None:
        self._require_admin(actor, origin.platform)
        await self.storage.delete_channel_settings(origin.channel_key)
        await self.storage.audit(origin.channel_key, actor.user_id, "reset", {})

    async def audit_log(self, actor: Actor, origin: Origin, limit: int = 20):
        self._require_admin(actor, origin.platform)
        return await self.storage.audit_log(origin.channel_key, limit)

    async def _save_channel(self, actor: Actor, updated: ChannelSettings, action: str, detail: dict) -> None:
        await self.storage.put_channel_settings(updated, actor.user_id)
        await self.storage.audit(updated.channel_key, actor.user_id, action, detail)

    async def _require_known(self, models: list[str]) -> None:
        unknown = await self.router.unknown_models(models)
        if unknown:
            raise UnknownModels(
                "Unknown model id(s): "
                + ", ".join(f"`{m}`" for m in unknown)
                + ". Check the spelling against your provider's model list (`council doctor` lists problems).",
                unknown,
            )


async def _open_storage(settings: Settings) -> Storage:
    """The database, or ConfigurationError naming DATABASE_URL and the file when it cannot be opened."""
    path = settings.sqlite_path
    try:
        # Probed synchronously first: a failed aiosqlite connect leaves its worker thread to die noisily.
        await asyncio.to_thread(_probe_sqlite, path)
        return await Storage.open(path)
    except (OSError, sqlite3.Error) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigurationError(
            f"DATABASE_URL: cannot open the database {path} ({reason}). "
            "Point DATABASE_URL at a writable file, e.g. sqlite:////absolute/path/council.db."
        ) from exc


def _probe_sqlite(path: str) -> None:
    if path == ":memory:":
        return
    Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
    sqlite3.connect(Path(path).expanduser()).close()


def _clean_members(members: Sequence[str]) -> list[str]:
    cleaned = list(dict.fromkeys(m.strip() for m in members if m.strip()))
    if len(cleaned) < 2:
        raise InputRejected("A council needs at least 2 members (comma- or space-separated model ids).")
    if len(cleaned) > MAX_MEMBERS:
        raise InputRejected(f"At most {MAX_MEMBERS} members; you named {len(cleaned)}.")
    return cleaned


def _first_set(*choices: bool | None) -> bool:
    """The first choice that is not None (per question, then the channel, then the default)."""
    return next((choice for choice in choices if choice is not None), False)


def _pick(override, default):
    """A channel override when set (0 is a real value), else the global default."""
    return default if override is None or override is False else override


def _filters(origin: Origin | None, scope: HistoryScope) -> dict[str, str | None]:
    if origin is None or scope == "all":
        return {}
    filters: dict[str, str | None] = {"platform": origin.platform.value}
    if origin.workspace_id:
        filters["workspace_id"] = origin.workspace_id
    if scope == "channel":
        filters["channel_id"] = origin.channel_id
    elif scope == "user":
        filters["user_id"] = origin.user_id
    return filters


def _describe_scope(origin: Origin | None, scope: HistoryScope) -> str:
    if origin is None or scope == "all":
        return "all councils"
    if scope == "channel":
        return "this channel"
    if scope == "user":
        return "your councils"
    return "this workspace" if origin.platform.value == "slack" else "this server"
