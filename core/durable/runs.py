"""Running councils: each one a background task that listeners follow through `CouncilRun`."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol

from core.admission.limits import Ticket
from core.engine.control import CouncilControl
from core.models import (
    CouncilCheckpoint,
    CouncilEvent,
    CouncilFinished,
    CouncilQueued,
    CouncilRequest,
    CouncilResult,
    CouncilStatus,
    ErrorInfo,
    ErrorKind,
    MemberFailed,
    Origin,
)
from core.providers.router import ProviderRouter
from core.shared.redact import Redactor
from core.storage import Storage
from core.telemetry.councils import CouncilTelemetry

log = logging.getLogger(__name__)

_KEEP_FINISHED_S = 600  # finished runs stay reachable this long, for late listeners (buttons)


class Journal(Protocol):
    """Where a durable council's completed steps are written as they complete (core/durable)."""

    async def prepared(self, request: CouncilRequest) -> None: ...
    async def record(self, event: CouncilEvent) -> None: ...


class CouncilRun:
    """A running (or finished) council that any number of listeners can follow."""

    def __init__(self, request: CouncilRequest, ticket: Ticket | None = None):
        self.request = request
        self.control = CouncilControl()
        self._events: list[CouncilEvent] = []
        self._changed = asyncio.Condition()
        self._result: CouncilResult | None = None
        self.task: asyncio.Task[None] | None = None
        self.ticket = ticket  # its admission (a slot, or a place in the queue)
        # Its place in the queue when admitted; None: ran at once.
        self.queued_position: int | None = ticket.position if ticket is not None else None
        # Run once admitted, before stage 1 (core/reading/reader.py: images, web search); returns notices.
        self.before_start: Callable[[], Awaitable[list[str]]] | None = None
        self.notices: list[str] = []  # about what the council read: put first in the result
        # A durable council (core/durable): what an earlier run completed, and where each
        # completed step is written as it completes.
        self.checkpoint: CouncilCheckpoint | None = None
        self.journal: Journal | None = None

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
                await self._changed.wait_for(self._has_events_after(index))
                batch = self._events[index:]
            for event in batch:
                yield event
                if isinstance(event, CouncilFinished):
                    return
            index += len(batch)

    def _has_events_after(self, index: int) -> Callable[[], bool]:
        return lambda: len(self._events) > index

    async def wait(self) -> CouncilResult:
        async with self._changed:
            await self._changed.wait_for(lambda: self._result is not None)
        assert self._result is not None
        return self._result

    def stop(self, *, synthesize: bool = False) -> None:
        if self.ticket is not None and self.ticket.waiting:
            self.control.stop()  # still queued: it leaves the queue now and never starts
            self.ticket.release()
        elif synthesize:
            self.control.synthesize_now()
        else:
            self.control.stop()


class CouncilRuns:
    """The councils this process runs: started in the background, stored when they end."""

    def __init__(self, storage: Storage, router: ProviderRouter, redact: Redactor) -> None:
        self.storage = storage
        self.router = router
        self.redact = redact
        self._runs: dict[str, CouncilRun] = {}
        # The router of a council's tenant (its own key and endpoint), set by the service.
        self.router_for: Callable[[Origin], Awaitable[ProviderRouter]] | None = None

    def get(self, council_id: str) -> CouncilRun | None:
        return self._runs.get(council_id)

    async def start(
        self,
        request: CouncilRequest,
        ticket: Ticket,
        before_start: Callable[[], Awaitable[list[str]]] | None = None,
        *,
        checkpoint: CouncilCheckpoint | None = None,
        journal: Journal | None = None,
    ) -> CouncilRun:
        run = CouncilRun(request, ticket)
        run.before_start = before_start
        run.checkpoint = checkpoint
        run.journal = journal
        if ticket.position is not None:
            await run.publish(CouncilQueued(council_id=run.council_id, position=ticket.position))
        self._runs[run.council_id] = run
        run.task = asyncio.create_task(self._drive(run, ticket), name=f"council-{run.council_id}")
        return run

    async def stop_all(self, timeout_s: float) -> None:
        """Stop every council (stored as cancelled), except durable ones: those are only halted,
        stored as running, for the next process to resume them from their last completed step."""
        for run in list(self._runs.values()):
            if run.task and not run.task.done():
                if run.journal is not None:
                    run.task.cancel()
                else:
                    run.control.stop()
        pending = [r.task for r in self._runs.values() if r.task and not r.task.done()]
        if pending:
            await asyncio.wait(pending, timeout=timeout_s)

    async def _drive(self, run: CouncilRun, ticket: Ticket) -> None:
        # This task is the council's: its calls' tasks inherit the telemetry's context (log
        # fields, the council's span) from here.
        resumed = run.checkpoint is not None and not run.checkpoint.empty
        with CouncilTelemetry(run.request, resumed=resumed) as telemetry:
            result = await self._run(run, ticket, telemetry)
            telemetry.finished(result)
        await run.publish(CouncilFinished(council_id=run.council_id, result=result))
        # Keep finished runs briefly so that late listeners (buttons) can still attach.
        asyncio.get_running_loop().call_later(_KEEP_FINISHED_S, self._runs.pop, run.council_id, None)

    async def _run(self, run: CouncilRun, ticket: Ticket, telemetry: CouncilTelemetry) -> CouncilResult:
        """The council's stored result, whatever happens to it."""
        result: CouncilResult | None = None
        try:
            if await ticket.wait() and not run.control.stopped:  # stopped while queued: it never starts
                if run.before_start is not None:
                    run.notices.extend(await run.before_start())
                    if run.journal is not None:
                        await run.journal.prepared(run.request)
                router = self.router if self.router_for is None else await self.router_for(run.request.origin)
                # The engine loads here, once a council really starts: `council ask` has shown its
                # first line by then, and a process that only reads history never loads it.
                from core.engine.council import run_council

                async for event in run_council(run.request, router, run.control, run.checkpoint):
                    telemetry.saw(event)
                    if isinstance(event, CouncilFinished):
                        result = event.result
                        break
                    if isinstance(event, MemberFailed):
                        event = self.redact.model(event)
                    if run.journal is not None:
                        await run.journal.record(event)
                    await run.publish(event)
        except Exception as exc:  # the council must always end with a stored, explained result
            log.exception("council %s crashed", run.council_id)
            message = getattr(exc, "user_message", None) or f"internal error: {type(exc).__name__}: {exc}"
            result = _ended(run, CouncilStatus.FAILED, ErrorKind.UNKNOWN, self.redact(message))
        finally:
            ticket.release()
        if result is None:
            result = _ended(run, CouncilStatus.CANCELLED, ErrorKind.CANCELLED, "The council was stopped.")
        result.notices[:0] = run.notices
        # Whatever a provider or an exception quoted back, no configured secret is stored or shown.
        result = self.redact.model(result)
        try:
            await self.storage.save_result(result)
        except Exception:
            log.exception("could not store council %s", run.council_id)
            result.notices.append("This council could not be saved to history.")
        return result


def _ended(run: CouncilRun, status: CouncilStatus, kind: ErrorKind, message: str) -> CouncilResult:
    return CouncilResult(
        council_id=run.council_id, request=run.request, status=status, error=ErrorInfo(kind=kind, message=message)
    )
