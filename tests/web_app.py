"""The browser app (bot/web) served by uvicorn on 127.0.0.1, port 0, in the test's own loop, over a
real CouncilService: the HTTP tests and the browser tests both drive it through a real socket."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn

from bot.web.app import create_web_app
from core.service import CouncilService


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
