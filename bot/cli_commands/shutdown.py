"""How every serving command stops (slack, discord, serve, worker, api, web): on SIGTERM or SIGINT,
the same steps in the same order, here and nowhere else.

1. Take no new events: /ready answers 503, and each intake registered with
   `service.telemetry.on_stop` stops (the Slack Events API answers 503, so Slack retries the event
   elsewhere; Socket Mode disconnects; uvicorn stops accepting).
2. Hand the durable councils over: halted with their completed steps stored, the lease given up and,
   on PostgreSQL, queued again, so that another worker or the restarted process resumes them at once.
3. Let the councils that cannot be handed over (the API's and the browser app's) finish, for at
   most COUNCIL_SHUTDOWN_GRACE_S; those still running then are stopped (stored as cancelled), so
   that their requests and live pages end with them.
4. Cancel the command: the bot stops what is left, then closes its platform connection last.

The command then returns 0, and the process exits without a traceback. A second signal skips the
wait of step 3. As PID 1 of a container the kernel ignores a signal with no handler: these handlers
are what makes `docker stop` take a second instead of its 10 s and a SIGKILL.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from collections.abc import Awaitable

from bot.cli_commands.exits import EXIT_OK
from core.service import CouncilService

log = logging.getLogger("council.stop")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_SERVER_RETURN_S = 1.0  # after the grace: how long a server that stops by itself (uvicorn) may take


async def until_stopped(service: CouncilService, command: Awaitable[int]) -> int:
    """Run a serving command until it returns or a stop signal has stopped it (then 0)."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(command)
    stopping: list[asyncio.Task[None]] = []

    def signalled(signum: signal.Signals) -> None:
        if stopping:
            log.info("%s again: stopping now", signum.name)
            stopping.append(loop.create_task(_now(service, task)))
            return
        stopping.append(loop.create_task(_stop(service, task, signum)))

    installed = []
    for signum in STOP_SIGNALS:
        try:
            loop.add_signal_handler(signum, signalled, signum)
            installed.append(signum)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread (a test's loop)
            pass
    try:
        try:
            return await task
        except asyncio.CancelledError:
            if not stopping or _cancelled_from_outside():
                raise
            return EXIT_OK
    finally:
        # The handover goes on when the command ended first (a worker's queue stopping ends it).
        await asyncio.gather(*stopping, return_exceptions=True)
        for signum in installed:
            loop.remove_signal_handler(signum)


def _cancelled_from_outside() -> bool:
    current = asyncio.current_task()
    return current is not None and current.cancelling() > 0


async def _stop(service: CouncilService, task: asyncio.Future[int], signum: signal.Signals) -> None:
    grace = service.settings.serving.shutdown_grace_s
    started = time.monotonic()
    log.info("%s: stopping (taking no new events; councils handed over, others given %g s)", signum.name, grace)
    service.telemetry.stop()
    try:
        handed = await service.durable.hand_over()
    except Exception as exc:  # a database gone at the stop: the lease runs out, the councils resume then
        log.warning("could not hand the councils over (%s); they resume when this process's lease runs out", exc)
        handed = []
    if handed:
        log.info("handed over %d council(s) to the next process: %s", len(handed), ", ".join(handed))
    left = await service.runs.finish_in_process(max(0.0, grace - (time.monotonic() - started)))
    if left:
        log.warning("%d council(s) did not finish within %g s (COUNCIL_SHUTDOWN_GRACE_S): stopped", left, grace)
        # Stopped (stored as cancelled) while the server still waits for its requests: the API's
        # caller gets the stopped council and a live page its last event, instead of a cut connection.
        await service.runs.stop_all(_SERVER_RETURN_S)
    if service.telemetry.ends_command and not task.done():
        await asyncio.wait([task], timeout=_SERVER_RETURN_S)
    await _cancel(task)
    log.info("stopped in %.1f s", time.monotonic() - started)


async def _now(service: CouncilService, task: asyncio.Future[int]) -> None:
    """A second signal: the councils still given their grace are stopped (stored as stopped) now."""
    await service.runs.stop_all(0.0)
    await _cancel(task)


async def _cancel(task: asyncio.Future[int]) -> None:
    if not task.done():
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
