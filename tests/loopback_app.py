"""An aiohttp application on 127.0.0.1 with an ephemeral port, as an async context manager.

async with LoopbackApp(routes) as app:
    app.url("/path")   # http://127.0.0.1:PORT/path
"""

from __future__ import annotations

from aiohttp import web


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
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
