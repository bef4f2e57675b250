"""Running one durable council: take its job over, resume it from its last completed step, and
hand the run to its platform's deliverer (which posts progress and, once, the answer)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

from core.admission.limits import Ticket
from core.durable.journal import StepJournal
from core.durable.runs import CouncilRun, CouncilRuns
from core.models import (
    ControlAction,
    CouncilCheckpoint,
    CouncilFinished,
    CouncilJob,
    CouncilRequest,
    Destination,
    Platform,
)
from core.ownership import CouncilOwner
from core.shared.redact import Redactor
from core.storage import Storage

log = logging.getLogger(__name__)

# (run, destination, resumed): follow the run in the destination's thread and post its answer
# after `Storage.jobs.claim_delivery` said so. `resumed`: another process had started it.
Deliver = Callable[[CouncilRun, Destination, bool], Awaitable[None]]
# (request, search): read the files and search the web before stage 1; returns the notices.
Prepare = Callable[[CouncilRequest, bool], Awaitable[list[str]]]


class CouncilWorker:
    """Runs durable councils in this process; platforms register how their answers are posted."""

    def __init__(self, storage: Storage, runs: CouncilRuns, owner: CouncilOwner, redact: Redactor, prepare: Prepare):
        self.storage = storage
        self.runs = runs
        self.owner = owner
        self.redact = redact
        self.prepare = prepare
        self.deliverers: dict[Platform, Deliver] = {}
        # Requests this process accepted, while it enqueues them: they carry what storage does not
        # keep (an image's bytes are never serialised), so a council run where it was accepted
        # (always, on SQLite) still shows the models its images.
        self._accepted: dict[str, CouncilRequest] = {}
        self._running: dict[str, asyncio.Task[object]] = {}  # the councils `run` follows now, by id
        self._handing_back: set[asyncio.Task[object]] = set()

    @contextmanager
    def accepting(self, request: CouncilRequest) -> Iterator[None]:
        self._accepted[request.council_id] = request
        try:
            yield
        finally:
            self._accepted.pop(request.council_id, None)

    def accepted(self, council_id: str) -> CouncilRequest | None:
        """The request as this process accepted it, while `accepting` holds it."""
        return self._accepted.get(council_id)

    def register(self, platform: Platform, deliver: Deliver) -> None:
        self.deliverers[platform] = deliver

    def can_deliver(self, platform: Platform) -> bool:
        return platform in self.deliverers

    async def run(self, council_id: str, ticket: Ticket) -> None:
        """Run (or resume) the council and wait until it is delivered; a council that has
        finished already is only delivered, if nobody has yet. Returns early, without an error,
        when `hand_back` takes the council from this process (a graceful stop)."""
        task = asyncio.current_task()
        if task is not None:
            self._running[council_id] = task
        try:
            await self._run(council_id, ticket)
        except asyncio.CancelledError:
            if task is None or task not in self._handing_back:
                raise
            task.uncancel()  # handed back: its job ends here, and the council is queued again
        finally:
            self._running.pop(council_id, None)
            self._handing_back.discard(task)  # type: ignore[arg-type]

    async def hand_back(self) -> None:
        """A graceful stop: every council this process is delivering stops being followed here, and
        its job ends as done (a queue would otherwise abort it, with a traceback). The councils
        themselves are halted next (CouncilRuns.halt_durable) and queued again for another process."""
        tasks = [task for task in self._running.values() if not task.done()]
        for task in tasks:
            self._handing_back.add(task)
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    async def _run(self, council_id: str, ticket: Ticket) -> None:
        try:
            await self.owner.start()
            job = await self.storage.jobs.take(council_id, self.owner.owner_id)
            if job is None:
                ticket.release()
                await self._deliver_stored(council_id)
                return
            checkpoint = await self.storage.jobs.checkpoint(council_id)
            run = await self._start(job, checkpoint, ticket)
        except BaseException:
            ticket.release()
            raise
        resumed = job.attempts > 1 or not checkpoint.empty  # another process had started it
        if resumed:
            log.info("council %s resumed here (attempt %d)", council_id, job.attempts)
        await self._deliver(run, job.destination, resumed=resumed)
        await run.wait()

    async def _start(self, job: CouncilJob, checkpoint: CouncilCheckpoint, ticket: Ticket) -> CouncilRun:
        request = self._accepted.get(job.request.council_id, job.request)
        search = job.search

        async def before_start() -> list[str]:
            return await self.prepare(request, search)

        run = await self.runs.start(
            request,
            ticket,
            None if job.prepared else before_start,
            checkpoint=checkpoint,
            journal=StepJournal(self.storage.jobs, self.redact, request.council_id),
        )
        if job.control is not None:  # pressed while no process ran it
            apply_control(run, job.control)
        return run

    async def _deliver(self, run: CouncilRun, destination: Destination | None, *, resumed: bool) -> None:
        if destination is None:
            return
        deliver = self.deliverers.get(destination.platform)
        if deliver is None:
            log.warning(
                "council %s: this process cannot post to %s; its answer is stored (council export)",
                run.council_id,
                destination.platform.value,
            )
            return
        try:
            await deliver(run, destination, resumed)
        except Exception:
            log.exception("council %s: delivery failed; its answer is stored", run.council_id)

    async def _deliver_stored(self, council_id: str) -> None:
        """A finished council whose answer no process has claimed to post (its worker stopped
        between storing and posting): post it now."""
        if await self.storage.jobs.delivered(council_id):
            return
        job = await self.storage.jobs.get(council_id)
        result = await self.storage.councils.get(council_id)
        if job is None or result is None:
            return
        run = CouncilRun(result.request)
        await run.publish(CouncilFinished(council_id=council_id, result=result))
        await self._deliver(run, job.destination, resumed=True)


def apply_control(run: CouncilRun, action: ControlAction) -> None:
    run.stop(synthesize=action is ControlAction.SYNTHESIZE)
