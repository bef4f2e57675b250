"""/health, /ready and /metrics for a process: what its HTTP server answers on those paths, and a
small server of its own (`--metrics-port`, COUNCIL_METRICS_PORT) for the processes that serve no
HTTP (`council worker`, Socket Mode, the Discord gateway). No key is asked on these paths.

/health: the process is alive. /ready: its database answers and its council queue is open and
reachable (on PostgreSQL, procrastinate's tables in that database); 503 until both are, and again
from the moment the process is asked to stop (`stop`), so that a load balancer sends it nothing more.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.models import Platform
from core.shared.redact import Redactor
from core.telemetry import metrics

if TYPE_CHECKING:
    from aiohttp import web

    from core.durable.service import DurableCouncils
    from core.storage import Storage

log = logging.getLogger(__name__)

READY_TIMEOUT_S = 3.0
OK = "ok"
PATHS = ("/health", "/ready", "/metrics")


@dataclass(frozen=True)
class Readiness:
    checks: dict[str, str] = field(default_factory=dict)  # name -> "ok" or why not

    @property
    def ready(self) -> bool:
        return all(value == OK for value in self.checks.values())

    @property
    def status(self) -> int:
        return 200 if self.ready else 503

    def body(self) -> str:
        return json.dumps({"status": "ready" if self.ready else "unready", **self.checks})


class ProcessHealth:
    """The service's side of the three paths (`service.telemetry`)."""

    def __init__(self, storage: Storage, durable: DurableCouncils, redact: Redactor) -> None:
        self.storage = storage
        self.durable = durable
        self.redact = redact
        self.stopping = False  # asked to stop (SIGTERM): takes no new events, answers /ready 503
        self._on_stop: list[Callable[[], object]] = []
        self.ends_command = False
        self._stopping: set[asyncio.Future[object]] = set()  # the callbacks' coroutines, while they run

    def on_stop(self, callback: Callable[[], object], *, ends_command: bool = False) -> None:
        """Called once when the process is asked to stop: a server stops taking new requests there
        (a coroutine it returns runs as a task). `ends_command`: the server then returns by itself
        once its requests are done (uvicorn), and the stop waits for it."""
        self._on_stop.append(callback)
        self.ends_command = self.ends_command or ends_command

    def stop(self) -> bool:
        """The process is asked to stop: /ready says so and every intake stops (its `on_stop`).
        False when it already was."""
        if self.stopping:
            return False
        self.stopping = True
        for callback in self._on_stop:
            try:
                outcome = callback()
                if inspect.isawaitable(outcome):
                    task = asyncio.ensure_future(outcome)
                    self._stopping.add(task)
                    task.add_done_callback(self._stopping.discard)
            except Exception as exc:  # one intake that cannot stop must not keep the others taking events
                log.warning("could not stop taking events: %s", exc)
        return True

    async def ready(self) -> Readiness:
        if self.stopping:
            return Readiness({"process": "stopping"})
        checks = {"database": await self._check(self._database()), "queue": OK}
        checks["queue"] = await self._check(self._queue()) if checks["database"] == OK else "database unreachable"
        return Readiness(checks)

    async def _check(self, probe: Awaitable[None]) -> str:
        try:
            async with asyncio.timeout(READY_TIMEOUT_S):
                await probe
        except TimeoutError:
            return f"no answer within {READY_TIMEOUT_S:g} s"
        except Exception as exc:
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return self.redact(text)
        return OK

    async def _database(self) -> None:
        await self.storage.db.fetchall("SELECT 1")

    async def _queue(self) -> None:
        await self.durable.queue()  # opened once (procrastinate: its schema, its connection pool)
        if self.durable.across_processes:
            await self.refresh_queue_depth()

    async def refresh_queue_depth(self) -> None:
        """council_queue_depth from procrastinate's jobs table (PostgreSQL only)."""
        from core.durable.queue import queue_name

        rows = await self.storage.db.fetchall(
            "SELECT queue_name, count(*) AS n FROM procrastinate_jobs WHERE status = 'todo' GROUP BY queue_name"
        )
        depth = {queue_name(p): 0 for p in Platform}
        depth.update({row[0]: int(row[1]) for row in rows})
        for queue, n in depth.items():
            metrics.QUEUE_DEPTH.labels(queue).set(n)

    async def metrics(self) -> tuple[bytes, str]:
        """The exposition, with the queue depth read now (a database that does not answer leaves it as it was)."""
        if self.durable.across_processes:
            try:
                async with asyncio.timeout(READY_TIMEOUT_S):
                    await self.refresh_queue_depth()
            except Exception as exc:
                log.debug("queue depth not refreshed: %s", type(exc).__name__)
        metrics.READY.set(1 if (await self.ready()).ready else 0)
        metrics.forget_dead_processes()
        return metrics.exposition()

    # ----------------------------------------------------------------- aiohttp

    def add_routes(self, app: web.Application) -> None:
        """/health, /ready and /metrics on an aiohttp application (the Slack Events server, ours)."""
        from aiohttp import web

        async def health(request: web.Request) -> web.Response:
            return web.Response(text="ok")

        async def ready(request: web.Request) -> web.Response:
            readiness = await self.ready()
            return web.Response(text=readiness.body(), status=readiness.status, content_type="application/json")

        async def scrape(request: web.Request) -> web.Response:
            body, content_type = await self.metrics()
            return web.Response(body=body, headers={"Content-Type": content_type})

        app.router.add_get("/health", health)
        app.router.add_get("/ready", ready)
        app.router.add_get("/metrics", scrape)

    async def serve(self, port: int, host: str = "0.0.0.0") -> None:
        """Serve the three paths on `host:port` until cancelled (`listen`, then waiting)."""
        runner = await self.listen(bind_metrics_port(port, host))
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    async def listen(self, listener: socket.socket) -> web.AppRunner:
        """Serve the three paths on a socket `bind_metrics_port` bound; the runner's `cleanup` stops it."""
        from aiohttp import web

        app = web.Application()
        self.add_routes(app)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.SockSite(runner, listener).start()
        host, port = listener.getsockname()[:2]
        log.info("metrics, /health and /ready at http://%s:%d", host, port)
        return runner


def bind_metrics_port(port: int, host: str = "0.0.0.0") -> socket.socket:
    """The metrics server's listening socket, bound before the process opens its database or
    connects anywhere: a busy port is one ConfigurationError line and an exit, at once. In
    multiprocess mode several processes of one host share the port (SO_REUSEPORT): any of them
    answers with the sum."""
    from core.errors import ConfigurationError

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        listener = socket.socket(family, kind, proto)
    except OSError as exc:
        raise ConfigurationError(
            f"Cannot serve metrics on {host}:{port} ({exc.strerror or exc}): check --host or COUNCIL_HTTP_HOST."
        ) from None
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if metrics.multiprocess_dir() is not None:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        listener.bind(address)
        listener.listen(128)
    except OSError as exc:
        listener.close()
        raise ConfigurationError(
            f"Cannot serve metrics on port {port} ({exc.strerror or exc}): choose another with "
            "--metrics-port or COUNCIL_METRICS_PORT (or set PROMETHEUS_MULTIPROC_DIR to share it)."
        ) from None
    listener.setblocking(False)
    return listener
