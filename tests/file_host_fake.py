"""A loopback file host standing in for files.slack.com / the Discord CDN.

Serves named files (optionally only with the right Bearer token, as Slack's `url_private` does),
and the misbehaviours a fetcher must survive: redirects, endless chunked bodies, slow drips,
HTTP errors and the HTML sign-in page Slack returns when the files:read scope is missing.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from aiohttp import web

from tests.loopback_app import LoopbackApp


@dataclass
class FileHostFake:
    files: dict[str, bytes] = field(default_factory=dict)
    token: str | None = None
    seen_authorization: list[str | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._app = LoopbackApp(
            [
                web.get("/files/{name}", self._file),
                web.get("/redirect/{target:.*}", self._redirect),
                web.get("/loop", self._loop),
                web.get("/endless", self._endless),
                web.get("/slow", self._slow),
                web.get("/status/{code}", self._status),
                web.get("/login-page", self._login_page),
            ]
        )

    def url(self, path: str, *, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self._app.port}{path}"

    async def __aenter__(self) -> FileHostFake:
        await self._app.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._app.__aexit__(*exc)

    async def _file(self, request: web.Request) -> web.Response:
        self.seen_authorization.append(request.headers.get("Authorization"))
        if self.token is not None and request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.Response(status=403, text="forbidden")
        name = request.match_info["name"]
        if name not in self.files:
            return web.Response(status=404, text="not found")
        return web.Response(body=self.files[name], content_type="application/octet-stream")

    async def _redirect(self, request: web.Request) -> web.Response:
        raise web.HTTPFound(location=request.match_info["target"])

    async def _loop(self, request: web.Request) -> web.Response:
        raise web.HTTPFound(location="/loop")

    async def _endless(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()  # chunked: no Content-Length to trust
        await response.prepare(request)
        chunk = b"x" * 65536
        while True:  # only the client's abort ends this
            await response.write(chunk)

    async def _slow(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        for _ in range(100):
            await response.write(b"drip ")
            await asyncio.sleep(0.1)
        return response

    async def _status(self, request: web.Request) -> web.Response:
        return web.Response(status=int(request.match_info["code"]), text="error")

    async def _login_page(self, request: web.Request) -> web.Response:
        return web.Response(text="<!DOCTYPE html><title>Sign in</title>", content_type="text/html")
