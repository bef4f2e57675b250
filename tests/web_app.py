"""The browser app (bot/web) served by uvicorn on 127.0.0.1, port 0, in the test's own loop, over a
real CouncilService: the HTTP tests and the browser tests both drive it through a real socket."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, TypeVar

import uvicorn

from bot.web.app import create_web_app
from core.service import CouncilService

T = TypeVar("T")


@asynccontextmanager
async def serve_asgi(app: Any, host: str = "127.0.0.1") -> AsyncIterator[str]:
    """`app` on a free loopback port; yields its base URL."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, 0))
    listener.listen(128)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", log_config=None))
    task = asyncio.create_task(server.serve(sockets=[listener]))
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    try:
        yield f"http://{host}:{listener.getsockname()[1]}"
    finally:
        server.should_exit = True
        server.force_exit = True  # open event streams would hold a graceful shutdown
        await asyncio.wait_for(task, 10)
        listener.close()


@asynccontextmanager
async def serve_web(service: CouncilService) -> AsyncIterator[str]:
    async with serve_asgi(create_web_app(service, "127.0.0.1")) as url:
        yield url


class ThreadedWeb:
    """The app, its service and whatever it talks to (scripted LLM, fake Slack) on an event loop of
    their own in a thread, for tests whose driver blocks (Selenium): `run(coro)` runs on that loop.

        web = ThreadedWeb(start)  # start(stack) -> CouncilService, entering what it needs into stack
        url = web.start(); web.run(service.storage.save_result(...)); web.stop()
    """

    def __init__(self, start: Callable[[AsyncExitStack], Awaitable[CouncilService]]):
        self._start = start
        self.loop = asyncio.new_event_loop()
        self.url = ""
        self.service: CouncilService | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name="web-app", daemon=True)

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._serve())
        except BaseException as exc:  # reported to the test by start()
            self._error = exc
            self._ready.set()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        async with AsyncExitStack() as stack:
            self.service = await self._start(stack)
            stack.push_async_callback(self.service.aclose)
            self.url = await stack.enter_async_context(serve_web(self.service))
            self._ready.set()
            await self._stop.wait()

    def start(self) -> str:
        self._thread.start()
        self._ready.wait(60)
        if self._error is not None:
            raise self._error
        return self.url

    def run(self, coro: Awaitable[T], timeout: float = 60) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)  # type: ignore[arg-type]

    def stop(self) -> None:
        if self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)
