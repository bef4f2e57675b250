"""The service's handle on durable councils: which queue they run on (procrastinate on
PostgreSQL, this process on SQLite), opened when first needed, and their Stop / Synthesize now."""

from __future__ import annotations

import asyncio

from core.admission.limits import ConcurrencyGate, Ticket
from core.durable.control import ControlRelay
from core.durable.queue import CouncilQueue, InProcessQueue, ProcrastinateQueue, run_together
from core.durable.worker import CouncilWorker
from core.models import ControlAction, Destination, Platform
from core.ownership import CouncilOwner
from core.settings import Settings
from core.storage import Storage
from core.storage.database import POSTGRESQL


class DurableCouncils:
    def __init__(
        self, settings: Settings, storage: Storage, worker: CouncilWorker, gate: ConcurrencyGate, owner: CouncilOwner
    ) -> None:
        self.settings = settings
        self.owner = owner
        self.storage = storage
        self.worker = worker
        self.gate = gate
        self._queue: CouncilQueue | None = None
        self._opening = asyncio.Lock()
        self._working: asyncio.Task[None] | None = None  # the task running `work`, while it runs
        self._handing_over = False  # the next cancel of `work` is the handover's, not the process's
        self._worked = asyncio.Event()  # set once `work`'s queue and listener have ended
        self.controls = ControlRelay(storage, worker.runs, self._conninfo())

    @property
    def across_processes(self) -> bool:
        """Whether a process without a worker still gets its councils run (PostgreSQL's queue)."""
        return self.storage.backend == POSTGRESQL

    def _conninfo(self) -> str | None:
        return self.settings.storage.database.location if self.across_processes else None

    async def queue(self) -> CouncilQueue:
        async with self._opening:
            if self._queue is None:
                queue = self._new_queue()
                await queue.open()
                self._queue = queue
            return self._queue

    def _new_queue(self) -> CouncilQueue:
        conninfo = self._conninfo()
        if conninfo is None:
            return InProcessQueue(self.worker, self.storage, self.gate)
        s = self.settings
        return ProcrastinateQueue(
            conninfo,
            self.worker,
            concurrency=s.durable.worker_concurrency or s.limits.max_concurrent_councils,
            heartbeat_s=s.durable.queue_heartbeat_s,
            stalled_s=s.durable.queue_stalled_s,
            shared=self.gate.shared,
        )

    async def enqueue(self, council_id: str, platform: Platform, ticket: Ticket) -> None:
        await (await self.queue()).enqueue(council_id, platform, ticket)

    async def work(self) -> None:
        """Run durable councils in this process until cancelled (`council worker`, and the bots
        unless `--no-worker`); on PostgreSQL, also listen for Stop / Synthesize from other processes.
        Once `hand_over` has stopped it, it takes nothing more and waits to be cancelled with its process."""
        self._working = asyncio.current_task()
        self._worked.clear()
        try:
            queue = await self.queue()
            await run_together(
                asyncio.create_task(queue.work(), name="council-worker-queue"),
                asyncio.create_task(self.controls.listen(), name="council-worker-controls"),
            )
            self._worked.set()
            await asyncio.Event().wait()  # in-process: adoption goes on at every lease renewal
        except asyncio.CancelledError:
            self._worked.set()
            current = asyncio.current_task()
            if not self._handing_over or current is None or current.cancelling() > 1:
                raise
            self._handing_over = False
            current.uncancel()  # the handover's cancel: the process stops the rest in its own order
        finally:
            self._worked.set()
        await asyncio.Event().wait()

    async def claim_delivery(self, council_id: str) -> bool:
        """True for exactly one caller per council, across every process: that one posts the answer."""
        return await self.storage.jobs.claim_delivery(council_id, self.owner.owner_id)

    async def keep_destination(self, council_id: str, destination: Destination) -> None:
        """Remember where a durable council shows itself (its status message, once posted)."""
        await self.storage.jobs.save_destination(council_id, destination)

    async def control(self, council_id: str, action: ControlAction) -> bool:
        return await self.controls.send(council_id, action)

    async def hand_over(self) -> list[str]:
        """A graceful stop's handover: take no more councils, halt the durable ones running here
        (their completed steps are stored), give the lease up and, on PostgreSQL, queue them again
        at once, so that another worker (or this one restarted) resumes them now rather than when
        the lease would have run out. Returns the ids handed over."""
        working, self._working = self._working, None
        stopping = working is not None and not working.done() and working is not asyncio.current_task()
        if stopping:
            assert working is not None
            self._handing_over = True
            working.cancel()  # procrastinate stops fetching and waits for its running jobs, which end now:
        await self.worker.hand_back()
        if stopping:
            await self._worked.wait()
        if self._queue is not None:
            await self._queue.halt()
        halted = await self.worker.runs.halt_durable()
        await self.owner.stop()
        if halted and self._queue is not None:
            await self._queue.hand_over(halted)
        return halted

    async def close(self) -> None:
        if self._queue is not None:
            await self._queue.close()
