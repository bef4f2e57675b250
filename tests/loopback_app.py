"""An aiohttp application on 127.0.0.1 with an ephemeral port, as an async context manager.

async with LoopbackApp(routes) as app:
    app.url("/path")   # http://127.0.0.1:PORT/path
"""

from __future__ import annotations

import socket

from aiohttp import web


def free_port() -> int:
    """A port free on 127.0.0.1 right now, for a server that must be told its port (a subprocess)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
