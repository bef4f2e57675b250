"""`council web`: the browser app on its own port (uvicorn); `council api` mounts the same app
beside the API with COUNCIL_WEB=on (bot/api/server.py)."""

from __future__ import annotations

from bot.api.server import announce, http_server
from bot.web.app import create_web_app
from core.service import CouncilService


async def serve_web(service: CouncilService, host: str | None = None, port: int | None = None) -> None:
    host = host or service.settings.web.host
    port = service.settings.web.port if port is None else port
    server, listener = http_server(service, create_web_app(service, host), host, port, lifespan="off")
    announce(service, f"council web: http://{host}:{listener.getsockname()[1]}/")
    await server.serve(sockets=[listener])
