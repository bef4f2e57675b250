"""CouncilService: the one API that adapters (CLI, Slack, Discord, the API, MCP, the web app) call.

Every operation is checked here (input limits, rate limits, budget, permissions) so that no
adapter decides anything about councils. Councils run as background tasks; adapters follow
them through `CouncilRun.events()`. `CouncilService`'s docstring lists what adapters may use of it;
adapters import it through the door, core/service/__init__.py."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import timedelta
from functools import cached_property
from typing import TYPE_CHECKING, TypeVar

from core.admission.admit import Admission
from core.admission.limits import ConcurrencyGate
from core.admission.shared_cap import SharedCap
from core.browse import CouncilBrowser, CouncilView, EvalRunView
from core.channels.admin import ChannelAdmin
from core.channels.permissions import Permissions
from core.channels.sessions import WebSessions
from core.channels.workspace import WorkspaceChannels
from core.database_url import POSTGRESQL
from core.direct import DirectModels
from core.doctor import diagnose, lineup_problems
from core.durable.health import ProcessHealth, bind_metrics_port
from core.durable.runs import CouncilRun, CouncilRuns
from core.durable.service import DurableCouncils
from core.durable.worker import CouncilWorker, Deliver
from core.errors import NotFound
from core.front_end_tasks import FrontEndTasks
from core.models import (
    Actor,
    AnswerFormat,
    ControlAction,
    ConversationTurn,
    CouncilMode,
    CouncilRequest,
    CouncilResult,
    Destination,
    Leaderboard,
    Origin,
    Platform,
)
from core.models.files import ExtractedAttachment
from core.ownership import CouncilOwner
from core.providers.router import ProviderRouter
from core.reading.reader import CouncilReading
from core.records.export import feedback_lines, leaderboard_document, to_json
from core.records.feedback import CouncilFeedback
from core.records.idempotency import IdempotencyKeys
from core.records.messages import CouncilMessages
from core.records.queries import CouncilQueries, HistoryScope
from core.records.retention import Retention
from core.records.timeline import timeline
from core.settings import Settings, load_settings
from core.shared.redact import Redactor
from core.storage import Storage
from core.storage.copy import migrate_database
from core.storage.jobs import JobTooNew
from core.storage.opening import open_configured_storage
from core.telemetry.metrics import count_platform_write
from core.telemetry.tracing import continued, submitted
from core.tenants import Tenants

if TYPE_CHECKING:
    from core.eval.session import CouncilEvals

__all__ = [
    "CouncilMessages",
    "CouncilRun",
    "CouncilService",
    "CouncilView",
    "EvalRunView",
    "WebSessions",
    "bind_metrics_port",
    "continued",
    "count_platform_write",
    "diagnose",
    "feedback_lines",
    "leaderboard_document",
    "lineup_problems",
    "migrate_database",
    "timeline",
    "to_json",
]

log = logging.getLogger(__name__)
T = TypeVar("T")

_SHUTDOWN_WAIT_S = 5.0  # how long aclose() waits for stopped councils to store their results


class CouncilService:
    """The service's own methods are what spans concerns: starting (start_council, submit_council,
    ask), stopping (stop, stop_councils), reading as a viewer (as_viewer), the leaderboard of a
    channel's line-up, register_deliverer, start_lease and its life (open, aclose). Every single
    concern is one attribute that adapters call directly, never through a forwarding method
    (docs/dev/CONTRACTS.md). These are all adapters may use (tests/test_import_graph.py checks bot/):

        service.settings     core/settings                  the process's settings, as loaded
        service.router       core/providers/router.py       `warm_up` the configured models at start-up
        service.admission    core/admission/admit.py        the question, the channel's configuration and every limit
        service.runs         core/durable/runs.py           running councils (CouncilRun: `get`, `follow`), stored
        service.reading      core/reading/reader.py         the asker's files (`read_files`) and the web search
        service.events       core/storage/events.py         platform event ids seen: a retried event is claimed once
        service.queries      core/records/queries.py        stored councils: results, history, exports, usage, pruning
        service.channels     core/channels/admin.py         a channel's configuration; admin changes to it, audited
        service.workspace    core/channels/workspace.py     the channels that have their own settings
        service.permissions  core/channels/permissions.py   who may see or do what: every such rule
        service.feedback     core/records/feedback.py       readers' votes and comments (who may vote is decided there)
        service.messages     core/records/messages.py       which council each chat message we post belongs to
        service.idempotency  core/records/idempotency.py    the API's Idempotency-Key header
        service.durable      core/durable/service.py        durable councils: the worker, delivery claims
        service.telemetry    core/durable/health.py         /health, /ready and /metrics on an adapter's HTTP port
        service.tasks        core/front_end_tasks.py        chat front ends' background tasks (titles, tags): one model
        service.evals        core/eval/session.py           `council eval`: runs, their stored samples and reports
        service.direct       core/direct.py                 members as models: one member (or the chairman) alone
        service.tenants      core/tenants/service.py        many workspaces: Slack installations, own keys, budgets
        service.browse       core/browse.py                 the browser app: history, a council, its calls, as a viewer
        service.sessions     core/channels/sessions.py      the browser app's sign-ins, kept on the server

    Each collaborator is built with what it needs, in order, and nothing is patched into one
    afterwards. Process-wide state (metrics' model labels, whether traces hold content) is the
    process's start-up's to set: `configure_telemetry` (core/service/process.py), called by bot/cli.py."""

    def __init__(self, settings: Settings, storage: Storage, router: ProviderRouter, *, lease_s: float | None = None):
        self.settings, self.storage, self.router = settings, storage, router
        self.redact = Redactor.from_settings(settings)
        # Taken when this process first runs a council (or a bot starts): read-only uses never own.
        self.owner = CouncilOwner(storage, lease_s or settings.durable.lease_s)
        limits = settings.limits
        # On PostgreSQL the cap holds across every process on the database; SQLite is one process.
        self.shared_cap = (
            SharedCap(storage, self.owner, limits.max_concurrent_councils) if storage.backend == POSTGRESQL else None
        )
        self.gate = ConcurrencyGate(limits.max_concurrent_councils, limits.max_queued_councils, self.shared_cap)
        self.permissions = Permissions(limits.admin_users)
        self.sessions = WebSessions(storage, settings)  # the browser app's sign-ins
        # A tenant's own key and line-up run its councils.
        self.tenants = Tenants(settings, storage, router, self.permissions)
        self.admission = Admission(
            settings, storage, router, self.redact, self.gate, self.owner,
            plans=self.tenants.plan, lineups=self.tenants.lineup,
        )  # fmt: skip
        self.queries = CouncilQueries(storage, self.permissions)
        self.reading = CouncilReading(settings, router, self.redact)
        self.runs = CouncilRuns(
            storage, self.redact, self.queries.get_result, self.tenants.router_at, self.reading.fact_search
        )
        self.events = storage.events
        self.channels = ChannelAdmin(storage, self.tenants.router_at, self.permissions, self.admission.effective_config)
        self.feedback = CouncilFeedback(storage, self.redact, Permissions.visible_to, self.queries.get_result)
        self.workspace = WorkspaceChannels(storage, self.admission.effective_config)
        # Durable councils: chat councils run as jobs that survive their process.
        self.worker = CouncilWorker(storage, self.runs, self.owner, self.redact, self._prepare)
        self.durable = DurableCouncils(settings, storage, self.worker, self.gate, self.owner)
        self.retention = Retention(self.queries)
        self.messages = CouncilMessages(storage)
        self.idempotency = IdempotencyKeys(storage)
        self._councils_stopped = False
        self.tasks = FrontEndTasks(settings, storage, router, self.admission, self.redact)
        self.direct = DirectModels(
            storage, router, self.admission.limits, self.channels.effective_config, settings.council.timeout_s
        )
        self.browse = CouncilBrowser(
            storage, self.permissions, self.queries, self.runs, self.feedback, self.leaderboard,
            self.direct.available, share_secret=settings.web.share_secret(),
        )  # fmt: skip
        self.telemetry = ProcessHealth(storage, self.durable, self.redact)

    @cached_property
    def evals(self) -> CouncilEvals:
        """`council eval` (core/eval): the operator's councils measured against their members.
        Built on first use: no other command needs its datasets and scorers loaded."""
        from core.eval.session import CouncilEvals

        return CouncilEvals(self.settings, self.storage, self.router, self.admission, self.redact)

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    async def open(
        cls,
        settings: Settings | None = None,
        *,
        router: ProviderRouter | None = None,
        lease_s: float | None = None,
        single_council: bool = False,
    ) -> CouncilService:
        """Open the database. Nothing is marked here: councils other processes run are theirs, and
        those of dead processes are marked by the first process that runs councils (`start_lease`).
        `single_council`: this process runs one council at a time (the terminal's commands)."""
        settings = settings or load_settings()
        storage = await open_configured_storage(settings)
        router = router or ProviderRouter(settings, single_council=single_council)
        service = cls(settings, storage, router, lease_s=lease_s)
        if settings.storage.retention_days:
            await service.retention.start(timedelta(days=settings.storage.retention_days))
        return service

    async def stop_councils(self) -> None:
        """Halt the councils this process runs and the deliveries following them (durable ones stay
        stored as running, for the next process). A bot calls it before it closes its platform
        client, so that no delivery writes to a closed client; `aclose` calls it too (once is done)."""
        if self._councils_stopped:
            return
        self._councils_stopped = True
        await self.durable.close()  # before the runs: a worker waits on its run
        await self.runs.stop_all(_SHUTDOWN_WAIT_S)

    async def aclose(self) -> None:
        self.retention.stop()
        await self.stop_councils()
        if self.shared_cap is not None:
            await self.shared_cap.aclose()
        await self.owner.stop()
        await self.reading.aclose()
        await self.tenants.aclose()
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
        mode: CouncilMode | None = None,
        answer_format: AnswerFormat | None = None,
        lenses: Mapping[str, str] | None = None,
    ) -> CouncilRun:
        """Validate, check limits, admit and start a council in the background. `members`/`chairman`
        replace the channel's for this council only (the API's and MCP's per-request choice).
        `attachments` come from `read_files`; `search` asks for (True) or against (False) a web
        search for this question, None follows the channel (`/council-admin search`); `mode`
        likewise (`quick` or `standard`; None: the channel's, `/council-admin mode`). `notices` go
        into the result (the API's files it could not read: it has no private channel).
        `answer_format`: the synthesizer writes the answer as JSON (the API's `response_format`).
        `lenses`: seat -> a preset's name or a persona, for this council's members (the API's metadata).

        Admission is atomic: the council holds a running slot or its place in the queue before
        this returns, so a burst cannot over-fill the queue. Raises InputRejected, RateLimited,
        BudgetExceeded or Overloaded with a user-facing message; a refused question uses up none
        of the asker's rate limit.
        """
        request, ticket = await self.admission.admit(
            question,
            origin,
            history,
            council_id=council_id,
            members=members,
            chairman=chairman,
            attachments=attachments,
            mode=mode,
            lenses=lenses,
        )
        request.answer_format = answer_format
        wants_search = await self._wants_search(search, origin)

        async def before_start() -> list[str]:
            return [*notices, *await self._prepare(request, wants_search)]

        return await self.runs.start(request, ticket, before_start)

    async def submit_council(
        self,
        question: str,
        origin: Origin,
        history: Sequence[ConversationTurn] = (),
        *,
        destination: Destination | Callable[[], Awaitable[Destination]],
        council_id: str | None = None,
        attachments: Sequence[ExtractedAttachment] = (),
        search: bool | None = None,
        mode: CouncilMode | None = None,
        members: Sequence[str] | None = None,
        chairman: str | None = None,
    ) -> str:
        """Admit a chat council as a durable job and return its id: a worker (this process on
        SQLite, any worker on PostgreSQL) runs it and posts it to `destination` through the
        deliverer its platform registered (`register_deliverer`). It survives the process that
        runs it (resumed from its last completed step). Raises what `start_council` raises.

        `destination` may be how to open it, called once the council is admitted (a Discord
        thread: a refused question opens none, and a burst opens only the admitted ones').
        `members`/`chairman`: the question's own (`members: a, b; chairman: c`), which must be among
        the models the channel allows (core/channels/admin.py), or InputRejected names them."""
        request, ticket = await self.admission.admit(
            question,
            origin,
            history,
            council_id=council_id,
            attachments=attachments,
            mode=mode,
            members=members,
            chairman=chairman,
        )
        request.trace = submitted(request)  # whichever worker runs it continues this trace
        try:
            if not isinstance(destination, Destination):
                destination = await destination()
            await self.storage.jobs.save(request, destination, search=await self._wants_search(search, origin))
            with self.worker.accepting(request):
                await self.durable.enqueue(request.council_id, destination.platform, ticket)
        except BaseException:
            ticket.release()
            raise
        return request.council_id

    def register_deliverer(self, platform: Platform, deliver: Deliver) -> None:
        """How this process posts a durable council of `platform` (progress, then the answer once:
        the deliverer must post it only when `claim_delivery` says so)."""
        self.worker.register(platform, deliver)

    async def _wants_search(self, search: bool | None, origin: Origin) -> bool:
        """The question's own choice, else its channel's (`/council-admin search`)."""
        channel = await self.storage.channels.get(origin.channel_key) if search is None else None
        return self.reading.wants_search(search, channel)

    async def _prepare(self, request: CouncilRequest, search: bool) -> list[str]:
        router = await self.tenants.router_at(request.origin)
        return await self.reading.prepare(request, search=search, router=router)

    async def ask(
        self, question: str, origin: Origin | None = None, history: Sequence[ConversationTurn] = ()
    ) -> CouncilResult:
        run = await self.start_council(question, origin or Origin(), history)
        return await run.wait()

    async def stop(self, council_id: str, actor: Actor, *, synthesize: bool = False) -> bool:
        """Stop a running council (or make it synthesize now). Only the asker or an admin may."""
        run = self.runs.get(council_id)
        if run is not None and not run.done:
            self.permissions.require_may_stop(actor, run.request.origin)
            run.stop(synthesize=synthesize)
            return True
        try:
            job = await self.storage.jobs.get(council_id)  # a durable council another process runs
        except JobTooNew:
            job = None  # a newer version runs it: its own Stop button reaches it
        if job is None:
            return False
        self.permissions.require_may_stop(actor, job.request.origin)
        return await self.durable.control(council_id, ControlAction.SYNTHESIZE if synthesize else ControlAction.STOP)

    async def as_viewer(self, read: Callable[[bool], Awaitable[T]], actor: Actor | Callable[[], Awaitable[Actor]]) -> T:
        """`read(admin)` of a stored council for a chat user (stage details, exports, votes): as
        the viewer first; one they may not see (NotFound) is read again with `admin` when the
        actor is an admin (`is_admin`: the platform's admins and COUNCIL_ADMIN_USERS). A callable
        `actor` is asked only then (Slack's users.info costs a call)."""
        try:
            return await read(False)
        except NotFound:
            who = actor if isinstance(actor, Actor) else await actor()
            if not self.permissions.is_admin(who):
                raise
            return await read(True)

    async def leaderboard(
        self, origin: Origin | None = None, scope: HistoryScope = "all", *, rounds: int = 1000
    ) -> Leaderboard:
        config = await self.channels.effective_config(origin) if origin is not None else self.admission.config_for(None)
        seats = [*config.members, config.chairman]
        return await self.queries.leaderboard(origin, scope, rounds=rounds, seats=seats)
