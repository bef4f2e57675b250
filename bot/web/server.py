"""`council web`: the browser app on its own port (uvicorn), and the app `council api` mounts
beside the API with COUNCIL_WEB=on."""

from __future__ import annotations

import uvicorn

from bot.api.server import SHUTDOWN_GRACE_S, announce, bind
from bot.web.app import create_web_app
from core.service import CouncilService


async def serve_web(service: CouncilService, host: str | None = None, port: int | None = None) -> None:
    host = host or service.settings.web.host
    port = service.settings.web.port if port is None else port
    app = create_web_app(service, host)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="off",
        log_config=None,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
    )
    server = uvicorn.Server(config)
    listener = bind(host, port)
    announce(service, f"council web: http://{host}:{listener.getsockname()[1]}/")
    await server.serve(sockets=[listener])
