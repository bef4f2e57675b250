"""An aiohttp application on 127.0.0.1 with an ephemeral port, as an async context manager.

async with LoopbackApp(routes) as app:
    app.url("/path")   # http://127.0.0.1:PORT/path
"""

from __future__ import annotations

import itertools
import os
import socket

from aiohttp import web

# Ports handed to subprocesses come from below the kernel's ephemeral range, one block per xdist
# worker: a port the kernel picked with bind(0) is free only until the next bind(0) or outgoing
# connection anywhere on the machine takes it, which under a parallel suite happens within the
# second a subprocess needs to start listening.
_BLOCK = 400
_FIRST = 12000


def _worker_index() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(worker.removeprefix("gw")) if worker.removeprefix("gw").isdigit() else 0


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as ranges:
            return int(ranges.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


_candidates = itertools.cycle(range(_FIRST + _worker_index() * _BLOCK, _FIRST + (_worker_index() + 1) * _BLOCK))


def free_port() -> int:
    """A port nobody listens on, on 127.0.0.1, for a server that must be told its port (a
    subprocess) or a client that must find nothing there; no other test worker hands it out."""
    assert _FIRST + (_worker_index() + 1) * _BLOCK <= _ephemeral_low(), "too many workers for the port blocks"
    for port in itertools.islice(_candidates, _BLOCK):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port in this worker's block")


async def serve_on_loopback(app: web.Application, host: str = "127.0.0.1", **site_options) -> tuple[web.AppRunner, int]:
    """Serve `app` on an ephemeral port of `host`: its runner (to clean up) and the port. Every fake
    server of the tests starts this way."""
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, host, 0, **site_options)
    await site.start()
    return runner, site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]


class LoopbackApp:
    host = "127.0.0.1"

    def __init__(self, routes: list[web.RouteDef]):
        self._routes = routes
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    async def __aenter__(self) -> LoopbackApp:
        app = web.Application()
        app.add_routes(self._routes)
        self._runner, self.port = await serve_on_loopback(app, self.host)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
