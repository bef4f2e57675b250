"""Running councils: each one a background task that listeners follow through `CouncilRun`."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol

from core.admission.limits import Ticket
from core.durable.run_log import EventLog
from core.engine.control import CouncilControl
from core.models import (
    ChairmanFinished,
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
from core.models.search import SearchResult
from core.providers.router import ProviderRouter
from core.records.story import story
from core.shared.redact import Redactor
from core.storage import Storage
from core.storage.reconnect import storage_failure
from core.telemetry.councils import CouncilTelemetry

log = logging.getLogger(__name__)

# Finished runs stay reachable (their results, not their events: CouncilRun) for late listeners
# (buttons, an API client repeating its Idempotency-Key), the last KEEP_FINISHED of them for at
# most KEEP_FINISHED_S; after that a late listener reads the stored council (`follow`).
# docs/memory.md has the measurement behind the number.
KEEP_FINISHED = 64
KEEP_FINISHED_S = 600.0


class Journal(Protocol):
    """Where a durable council's completed steps are written as they complete (core/durable)."""

    async def prepared(self, request: CouncilRequest) -> None: ...
    async def record(self, event: CouncilEvent) -> None: ...


class CouncilRun:
    """A running (or finished) council that any number of listeners can follow. While it runs,
    its events are kept (core/durable/run_log.py); once it has finished and nobody listens, only its
    result: later listeners get the council's story from it (core/records/story.py)."""

    def __init__(
        self,
        request: CouncilRequest,
        ticket: Ticket | None = None,
        *,
        before_start: Callable[[], Awaitable[list[str]]] | None = None,
        checkpoint: CouncilCheckpoint | None = None,
        journal: Journal | None = None,
    ):
        self.request = request
        self.control = CouncilControl()
        self._log = EventLog()
        self._listeners = 0  # listeners reading the log now: it is kept for them
        self._changed = asyncio.Condition()
        self._result: CouncilResult | None = None
        self.task: asyncio.Task[None] | None = None
        self.ticket = ticket  # its admission (a slot, or a place in the queue)
        # Its place in the queue when admitted; None: ran at once.
        self.queued_position: int | None = ticket.position if ticket is not None else None
        # Run once admitted, before stage 1 (core/reading/reader.py: images, web search); returns notices.
        self.before_start = before_start
        self.notices: list[str] = []  # about what the council read: put first in the result
        # A durable council (core/durable): what an earlier run completed, and where each
        # completed step is written as it completes.
        self.checkpoint = checkpoint
        self.journal = journal

    @classmethod
    def finished(cls, result: CouncilResult) -> CouncilRun:
        """A stored council as a run that has finished: its listeners get its story."""
        run = cls(result.request)
        run._result = result
        run._log.forget()
        return run

    @property
    def council_id(self) -> str:
        return self.request.council_id

    @property
    def done(self) -> bool:
        return self._result is not None

    async def publish(self, event: CouncilEvent) -> None:
        async with self._changed:
            self._log.append(event)
            if isinstance(event, ChairmanFinished | CouncilFinished):
                self._log.merge_tokens()  # the synthesis is complete: its pieces are one text now
            if isinstance(event, CouncilFinished):
                self._result = event.result
                self._let_go()
            self._changed.notify_all()

    def _let_go(self) -> None:
        """A finished council nobody reads any more keeps its result, not its events, nor what
        only a run needs (its earlier run's checkpoint, its journal, its reading)."""
        if self._listeners == 0:
            self._log.forget()
        self.before_start = self.checkpoint = self.journal = None

    async def events(self, after: int = 0) -> AsyncIterator[CouncilEvent]:
        """Every event after number `after` (0: from the start, a late listener gets the replay),
        ending with CouncilFinished."""
        async for _, event in self.numbered(after):
            yield event

    async def numbered(self, after: int = 0) -> AsyncIterator[tuple[int, CouncilEvent]]:
        """`events` with their numbers, for a listener that resumes after the last it saw (SSE's
        Last-Event-ID). Numbers hold while the run keeps its events; once only its result is
        kept, the story is numbered from 1, and a listener resuming after any number gets the
        end (CouncilFinished holds the whole result)."""
        cursor = after + 1
        self._listeners += 1
        try:
            while True:
                async with self._changed:
                    await self._changed.wait_for(self._has_events_from(cursor))
                    batch = self._log.since(cursor) if self._log.kept else None
                if batch is None:
                    for told in self._told(after):
                        yield told
                    return
                for entry in batch:
                    event = entry.read_from(cursor)
                    cursor = entry.number + 1
                    if event is not None:
                        yield entry.number, event
                    if isinstance(event, CouncilFinished):
                        return
        finally:
            self._listeners -= 1
            if self.done and self._listeners == 0:
                self._log.forget()

    def _has_events_from(self, number: int) -> Callable[[], bool]:
        return lambda: self._log.next_number > number or not self._log.kept

    def _told(self, after: int) -> list[tuple[int, CouncilEvent]]:
        assert self._result is not None  # a log is forgotten only once the council has finished
        if after:
            return [(after + 1, CouncilFinished(council_id=self.council_id, result=self._result))]
        return list(enumerate(story(self._result), start=1))

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

    def __init__(
        self,
        storage: Storage,
        redact: Redactor,
        stored: Callable[[str], Awaitable[CouncilResult]],
        router_for: Callable[[Origin], Awaitable[ProviderRouter]],
        fact_search: Callable[[str], Awaitable[list[SearchResult]]] | None = None,
    ) -> None:
        """`stored`: a stored council as users read it (NotFound when there is none); `router_for`:
        the router of a council's tenant (its own key and endpoint, else the operator's);
        `fact_search`: the web search the chairman may use once on a disputed fact
        (core/engine/fact_check.py)."""
        self.storage = storage
        self.redact = redact
        self.stored = stored
        self.router_for = router_for
        self.fact_search = fact_search
        self._runs: dict[str, CouncilRun] = {}  # running
        # Finished, oldest first, with when they finished: their results, for late listeners.
        self._finished: OrderedDict[str, tuple[float, CouncilRun]] = OrderedDict()

    def get(self, council_id: str) -> CouncilRun | None:
        """The council's run while it runs here, or for a while after (KEEP_FINISHED)."""
        run = self._runs.get(council_id)
        if run is not None:
            return run
        self._expire()
        kept = self._finished.get(council_id)
        return kept[1] if kept is not None else None

    async def follow(self, council_id: str) -> CouncilRun:
        """What a late listener follows: the run while this process has it, else the stored
        council as a finished run (its story). NotFound when neither (not a council, or one that
        another process runs)."""
        run = self.get(council_id)
        return run if run is not None else CouncilRun.finished(await self.stored(council_id))

    def _finish(self, run: CouncilRun) -> None:
        """A finished run moves to the bounded few kept for late listeners."""
        self._runs.pop(run.council_id, None)
        self._finished[run.council_id] = (time.monotonic(), run)
        while len(self._finished) > KEEP_FINISHED:
            self._finished.popitem(last=False)
        self._expire()

    def _expire(self) -> None:
        deadline = time.monotonic() - KEEP_FINISHED_S
        while self._finished and next(iter(self._finished.values()))[0] < deadline:
            self._finished.popitem(last=False)

    def active(self) -> list[tuple[str, CouncilRun]]:
        """(id, run) of the councils this process is running (finished ones are in `get` for a while,
        and stored)."""
        return list(self._runs.items())

    async def start(
        self,
        request: CouncilRequest,
        ticket: Ticket,
        before_start: Callable[[], Awaitable[list[str]]] | None = None,
        *,
        checkpoint: CouncilCheckpoint | None = None,
        journal: Journal | None = None,
    ) -> CouncilRun:
        run = CouncilRun(request, ticket, before_start=before_start, checkpoint=checkpoint, journal=journal)
        if ticket.position is not None:
            await run.publish(CouncilQueued(council_id=run.council_id, position=ticket.position))
        self._runs[run.council_id] = run
        run.task = asyncio.create_task(self._drive(run, ticket), name=f"council-{run.council_id}")
        return run

    async def stop_all(self, timeout_s: float) -> None:
        """Stop every council (stored as cancelled), except durable ones: those are only halted,
        stored as running, for the next process to resume them from their last completed step."""
        await self.halt_durable()
        for run in list(self._runs.values()):
            if run.task and not run.task.done():
                run.control.stop()
        pending = [r.task for r in self._runs.values() if r.task and not r.task.done()]
        if pending:
            _, still = await asyncio.wait(pending, timeout=timeout_s)
            # A council that did not end within the wait is cancelled: none may outlive the stop and
            # call a provider the service is about to close.
            for task in still:
                task.cancel()
            if still:
                await asyncio.wait(still, timeout=timeout_s)

    async def halt_durable(self) -> list[str]:
        """Halt the durable councils running here (left stored as running, their completed steps
        journalled) and return their ids: another process resumes them once this one's lease is gone."""
        halted = [r for r in self._runs.values() if r.journal is not None and r.task and not r.task.done()]
        for run in halted:
            assert run.task is not None
            run.task.cancel()
        if halted:
            await asyncio.wait([r.task for r in halted if r.task is not None])
        return [run.council_id for run in halted]

    async def finish_in_process(self, timeout_s: float) -> int:
        """Wait up to `timeout_s` for the councils that cannot be handed over (not durable: the
        API's, the browser app's) to finish; returns how many are still running."""
        pending = [r.task for r in self._runs.values() if r.journal is None and r.task and not r.task.done()]
        if pending:
            _, still = await asyncio.wait(pending, timeout=timeout_s)
            return len(still)
        return 0

    async def _drive(self, run: CouncilRun, ticket: Ticket) -> None:
        # This task is the council's: its calls' tasks inherit the telemetry's context (log
        # fields, the council's span) from here.
        resumed = run.checkpoint is not None and not run.checkpoint.empty
        with CouncilTelemetry(run.request, resumed=resumed) as telemetry:
            result = await self._run(run, ticket, telemetry)
            telemetry.finished(result)
        await run.publish(CouncilFinished(council_id=run.council_id, result=result))
        self._finish(run)

    async def _run(self, run: CouncilRun, ticket: Ticket, telemetry: CouncilTelemetry) -> CouncilResult:
        """The council's stored result, whatever happens to it."""
        result: CouncilResult | None = None
        try:
            if await ticket.wait() and not run.control.stopped:  # stopped while queued: it never starts
                if run.before_start is not None:
                    run.notices.extend(await run.before_start())
                    if run.journal is not None:
                        await run.journal.prepared(run.request)
                router = await self.router_for(run.request.origin)
                # The engine loads here, once a council really starts: `council ask` has shown its
                # first line by then, and a process that only reads history never loads it.
                from core.engine.council import run_council

                events = run_council(run.request, router, run.control, run.checkpoint, fact_search=self.fact_search)
                async for event in events:
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
        except Exception as exc:
            # The answer is still delivered: one line says why it is not in history (no traceback:
            # a full disk or a database that stayed away is an operator's matter, not a crash).
            why = self.redact(storage_failure(exc))
            log.error("could not store council %s: %s", run.council_id, why)
            result.notices.append(f"This council could not be saved to history: {why}.")
        return result


def _ended(run: CouncilRun, status: CouncilStatus, kind: ErrorKind, message: str) -> CouncilResult:
    return CouncilResult(
        council_id=run.council_id, request=run.request, status=status, error=ErrorInfo(kind=kind, message=message)
    )
