"""/health, /ready and /metrics for a process: what its HTTP server answers on those paths, and a
small server of its own (`--metrics-port`, COUNCIL_METRICS_PORT) for the processes that serve no
HTTP (`council worker`, Socket Mode, the Discord gateway). No key is asked on these paths.

/health: the process is alive. /ready: its database answers and its council queue is open and
reachable (on PostgreSQL, procrastinate's tables in that database); 503 until both are.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable
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

    async def ready(self) -> Readiness:
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
        """Serve the three paths on `host:port` until cancelled. In multiprocess mode several
        processes of one host share the port (SO_REUSEPORT): any of them answers with the sum."""
        from aiohttp import web

        from core.errors import ConfigurationError

        app = web.Application()
        self.add_routes(app)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, port, reuse_port=metrics.multiprocess_dir() is not None)
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            raise ConfigurationError(
                f"Cannot serve metrics on port {port} ({exc.strerror or exc}): choose another with "
                "--metrics-port or COUNCIL_METRICS_PORT (or set PROMETHEUS_MULTIPROC_DIR to share it)."
            ) from None
        log.info("metrics, /health and /ready at http://%s:%d", host, port)
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()
