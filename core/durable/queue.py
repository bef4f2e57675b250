"""Where durable councils run.

`InProcessQueue` (SQLite, one process): a council runs in the process that accepted it. When
that process dies, its councils stay "running" under its ownership lease (core/ownership.py);
once the lease has run out, the next bot process adopts them at its next lease renewal and
resumes them from their last completed step.

`ProcrastinateQueue` (PostgreSQL): accepting a council defers a procrastinate job; any `council
worker` (or bot process with its worker) runs it. procrastinate was chosen over pgqueuer because
it speaks psycopg 3 natively (the driver the storage already uses), is async, and its workers
keep a heartbeat in the database: a job whose worker stopped beating (kill -9, a lost machine)
is found with `get_stalled_jobs` and retried, here every `heartbeat_s`, so a dead worker's
council resumes elsewhere within `stalled_s + heartbeat_s` plus a poll. Each platform has its
own queue (`council-slack`, ...): only a process that can post to that platform takes its jobs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from contextlib import nullcontext
from typing import Any, Protocol

from core.admission.limits import ConcurrencyGate, SharedSlots, Ticket
from core.durable.worker import CouncilWorker
from core.models import CouncilRequest, Platform
from core.storage import Storage
from core.storage.jobs import JobTooNew

log = logging.getLogger(__name__)

TASK_NAME = "council.run"
_SCHEMA_LOCK = "council:procrastinate-schema"
_SHUTDOWN_GRACE_S = 1.0
LEAVE_FOR_NEWER_S = 5  # a job from a newer version comes back to the queue after this long


def queue_name(platform: Platform) -> str:
    return f"council-{platform.value}"


class CouncilQueue(Protocol):
    durable_across_processes: bool

    async def open(self) -> None: ...
    async def enqueue(self, council_id: str, platform: Platform, ticket: Ticket) -> None: ...
    async def work(self) -> None: ...
    async def halt(self) -> None: ...
    async def hand_over(self, council_ids: list[str]) -> None: ...
    async def close(self) -> None: ...


async def run_together(*tasks: asyncio.Task[Any]) -> None:
    """Until each task ends or one fails (raised here); cancelled, each task is cancelled once and
    waited for. Not gather: a cancelled gather cancels its tasks and returns at once (its caller
    then closed the queue under a worker still shutting down), and cancelling again after it
    interrupted procrastinate's shutdown: the job was neither ended nor its worker unregistered,
    left `doing` for the stalled-job retry instead of being handed over by requeue_orphans."""
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in done:
            task.result()
    finally:
        for task in tasks:
            task.cancel()  # the worker's: procrastinate ends its jobs (aborted after the grace) and unregisters
        await asyncio.wait(tasks)


class InProcessQueue:
    durable_across_processes = False

    def __init__(self, worker: CouncilWorker, storage: Storage, gate: ConcurrencyGate) -> None:
        self.worker = worker
        self.storage = storage
        self.gate = gate
        self.working = False  # adopts orphans only while this process runs a worker
        self._tasks: set[asyncio.Task[None]] = set()

    async def open(self) -> None:
        self.worker.owner.after_renew.append(self.adopt_orphans)

    async def enqueue(self, council_id: str, platform: Platform, ticket: Ticket) -> None:
        """Starts the council in this process and returns at once, as the PostgreSQL queue does:
        submitting means admitted and queued on both backends. The request as it was accepted
        (with its image bytes, which are not stored) goes with the task."""
        self._adopt(council_id, ticket, self.worker.accepted(council_id))

    def _adopt(self, council_id: str, ticket: Ticket, accepted: CouncilRequest | None = None) -> None:
        task = asyncio.create_task(self._run(council_id, ticket, accepted), name=f"council-job-{council_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, council_id: str, ticket: Ticket, accepted: CouncilRequest | None) -> None:
        try:
            with self.worker.accepting(accepted) if accepted is not None else nullcontext():
                await self.worker.run(council_id, ticket)
        except JobTooNew as exc:  # left running: a newer process on this file adopts it
            log.warning("%s", exc)
        except Exception:
            log.exception("council %s could not run", council_id)

    async def work(self) -> None:
        """Adopt the councils a dead process left (now and at every lease renewal)."""
        self.working = True
        await self.worker.owner.start()
        await self.adopt_orphans()

    async def adopt_orphans(self) -> None:
        if not self.working:
            return
        for council_id in await self.storage.jobs.orphans():
            try:
                job = await self.storage.jobs.get(council_id)
            except JobTooNew:
                continue  # a newer process adopts it
            if job is None or (job.destination and not self.worker.can_deliver(job.destination.platform)):
                continue
            try:
                ticket = self.gate.admit()
            except Exception:
                return  # full: the next renewal tries again
            if not await self.storage.jobs.adopt(council_id, self.worker.owner.owner_id):
                ticket.release()
                continue
            log.info("resuming council %s, left running by a process that stopped", council_id)
            self._adopt(council_id, ticket)

    async def halt(self) -> None:
        """Cancelled runs stay stored as running: the next process resumes them (at once, once
        this one's lease is given up)."""
        self.working = False
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def hand_over(self, council_ids: list[str]) -> None:
        """Nothing to queue: the process that opens this database next adopts them at its start."""

    async def close(self) -> None:
        await self.halt()


class ProcrastinateQueue:
    durable_across_processes = True

    def __init__(
        self,
        conninfo: str,
        worker: CouncilWorker,
        *,
        concurrency: int,
        heartbeat_s: float,
        stalled_s: float,
        shared: SharedSlots | None = None,
    ) -> None:
        try:
            from procrastinate import App, PsycopgConnector
        except ImportError as exc:
            from core.errors import ConfigurationError

            raise ConfigurationError(
                "PostgreSQL councils run on a procrastinate queue, which is not installed: "
                "pip install 'llm-council-bot[postgres]'"
            ) from exc
        self.conninfo = conninfo
        self.worker = worker
        self.concurrency = concurrency
        self.heartbeat_s = heartbeat_s
        self.stalled_s = stalled_s
        self.app = App(connector=PsycopgConnector(conninfo=conninfo, min_size=1, max_size=max(4, concurrency + 2)))
        # procrastinate bounds this worker's jobs; `shared` holds COUNCIL_MAX_CONCURRENT across workers.
        self.gate = ConcurrencyGate(concurrency, concurrency, shared)
        self.working = False  # requeues orphans only while this process runs a worker
        self._closed = False
        from procrastinate import RetryStrategy

        # A job a newer version queued (JobTooNew, nothing taken) goes back to the queue for a
        # newer worker, as often as it comes back here: never failed, dropped or run half.
        leave_for_newer = RetryStrategy(wait=LEAVE_FOR_NEWER_S, retry_exceptions={JobTooNew})
        self._task: Any = self.app.task(name=TASK_NAME, pass_context=False, retry=leave_for_newer)(self._run)

    async def _run(self, council_id: str) -> None:
        await self.worker.run(council_id, self.gate.admit())

    async def open(self) -> None:
        await self.app.open_async()
        await self._ensure_schema()
        self.worker.owner.after_renew.append(self.requeue_orphans)

    async def _ensure_schema(self) -> None:
        """procrastinate's own tables, created once (under a lock: replicas start together)."""
        import psycopg

        async with await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True) as conn:
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (_SCHEMA_LOCK,))
                cursor = await conn.execute("SELECT to_regclass('procrastinate_jobs')")
                row = await cursor.fetchone()
                if row is None or row[0] is None:
                    await conn.execute(self.app.schema_manager.get_schema())

    async def enqueue(self, council_id: str, platform: Platform, ticket: Ticket) -> None:
        ticket.release()  # the queue keeps the order now; workers bound how many run
        await self._defer(council_id, platform)

    async def _defer(self, council_id: str, platform: Platform) -> None:
        from procrastinate.exceptions import AlreadyEnqueued

        try:
            await self._task.configure(queue=queue_name(platform), queueing_lock=council_id).defer_async(
                council_id=council_id
            )
        except AlreadyEnqueued:
            pass  # another process queued it just now

    async def requeue_orphans(self) -> None:
        """A running council with no live job (its worker was stopped cleanly, or its job was
        lost) and a dead owner goes back to the queue; stalled jobs are `_retry_stalled`'s."""
        if not self.working:
            return
        storage = self.worker.storage
        for council_id in await storage.jobs.orphans():
            live = await storage.db.fetchall(
                """SELECT 1 FROM procrastinate_jobs WHERE task_name = ? AND status IN ('todo', 'doing')
                   AND args ->> 'council_id' = ?""",
                (TASK_NAME, council_id),
            )
            try:
                job = None if live else await storage.jobs.get(council_id)
            except JobTooNew:
                continue  # a newer process queues it again
            if job is not None:
                log.warning("council %s has no live job and its process stopped: queued again", council_id)
                platform = job.destination.platform if job.destination else job.request.origin.platform
                await self._defer(council_id, platform)

    async def work(self) -> None:
        """Run jobs of every platform this process can post to, and retry stalled ones, until cancelled."""
        platforms = list(self.worker.deliverers)
        if not platforms:
            from core.errors import ConfigurationError

            raise ConfigurationError("This worker cannot post to any platform: set SLACK_BOT_TOKEN (or DISCORD_TOKEN).")
        self.working = True
        await self.worker.owner.start()
        worker = asyncio.create_task(
            self.app.run_worker_async(
                queues=[queue_name(p) for p in platforms],
                concurrency=self.concurrency,
                install_signal_handlers=False,
                listen_notify=True,
                fetch_job_polling_interval=self.heartbeat_s,
                update_heartbeat_interval=self.heartbeat_s,
                stalled_worker_timeout=self.stalled_s,
                delete_jobs="successful",
                # A clean stop does not wait for councils (minutes): their jobs end, and the
                # councils, left running without an owner, are queued again by the other
                # processes (requeue_orphans) and resumed from their last completed stage.
                shutdown_graceful_timeout=_SHUTDOWN_GRACE_S,
            ),
            name="council-worker",
        )
        retrier = asyncio.create_task(self._retry_stalled(platforms), name="council-worker-stalled")
        await run_together(worker, retrier)

    async def _retry_stalled(self, platforms: Iterable[Platform]) -> None:
        """Jobs whose worker stopped beating go back to the queue (another worker resumes them)."""
        manager = self.app.job_manager
        while True:
            try:
                for platform in platforms:
                    for job in await manager.get_stalled_jobs(
                        queue=queue_name(platform), seconds_since_heartbeat=self.stalled_s
                    ):
                        log.warning("council job %s: its worker stopped; queued again", job.id)
                        await manager.retry_job(job)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # another worker retried it first, or a busy database
                log.info("stalled council jobs: %s", exc)
            await asyncio.sleep(self.heartbeat_s)

    async def halt(self) -> None:
        """The worker is stopped by cancelling `work` (its jobs end after `_SHUTDOWN_GRACE_S`)."""
        self.working = False

    async def hand_over(self, council_ids: list[str]) -> None:
        """Queue the halted councils again now (this process's lease is gone): any worker
        LISTENing takes them at once, without waiting for `requeue_orphans` at its next renewal."""
        storage = self.worker.storage
        for council_id in council_ids:
            try:
                job = await storage.jobs.get(council_id)
                if job is None:
                    continue
                platform = job.destination.platform if job.destination else job.request.origin.platform
                await self._defer(council_id, platform)
            except Exception as exc:  # the other processes' requeue_orphans queues it within a lease
                log.warning("council %s not queued again at stop (%s); another process will", council_id, exc)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self.app.close_async()
