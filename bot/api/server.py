"""Run the API (uvicorn, with MCP over streamable HTTP at /mcp) or the MCP server on stdio."""

from __future__ import annotations

import contextlib
import logging
import math
import socket
import sys
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route

from bot.api.app import MCP_PATH, create_app
from bot.api.guard import allowed_hosts
from bot.api.keys import ApiKeys, check_exposure
from bot.api.mcp_tools import build_mcp
from core.errors import CouncilError
from core.service import CouncilService

log = logging.getLogger(__name__)
_address_log = logging.getLogger("council.address")
_address_log.setLevel(logging.INFO)
_AFTER_GRACE_S = 2  # how much longer than COUNCIL_SHUTDOWN_GRACE_S uvicorn waits for its requests


class _Server(uvicorn.Server):
    """uvicorn without its own signal handlers: the process's stop (bot/cli_commands/shutdown.py)
    is the one place that handles SIGTERM, and asks uvicorn to stop through `should_exit`."""

    @contextlib.contextmanager
    def capture_signals(self) -> Any:
        yield

    def install_signal_handlers(self) -> None:  # uvicorn before 0.29
        pass


def build_asgi(service: CouncilService, host: str) -> Any:
    settings = service.settings
    keys = ApiKeys.parse(settings.api.keys, settings.api.trusted_keys)
    check_exposure(keys, host)
    mcp = build_mcp(service, keys)
    # Host and Origin are checked for every path, /mcp too, by bot/api/guard.py (with the names
    # COUNCIL_API_ALLOWED_HOSTS adds): the SDK's own check would refuse those names.
    unguarded = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    mcp_app = mcp.streamable_http_app(streamable_http_path=MCP_PATH, host=host, transport_security=unguarded)
    endpoint = next(route.endpoint for route in mcp_app.routes if isinstance(route, Route) and route.path == MCP_PATH)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with mcp.session_manager.run():
            yield

    hosts = allowed_hosts(settings.api.allowed_hosts, host)
    api = create_app(service, keys, hosts=hosts, mcp_app=endpoint, lifespan=lifespan)
    if not settings.web.enabled:
        return api
    from bot.web.app import Beside, create_web_app

    return Beside(api, create_web_app(service, host))


async def serve_api(service: CouncilService, host: str | None = None, port: int | None = None) -> None:
    host = host or service.settings.api.host
    port = service.settings.api.port if port is None else port
    server, listener = http_server(service, build_asgi(service, host), host, port, lifespan="on")
    bound = listener.getsockname()[1]
    web = f", browser app: http://{host}:{bound}/" if service.settings.web.enabled else ""
    announce(service, f"council api: http://{host}:{bound}/v1 (MCP: http://{host}:{bound}{MCP_PATH}{web})")
    await server.serve(sockets=[listener])


def http_server(
    service: CouncilService, app: Any, host: str, port: int, *, lifespan: str
) -> tuple[uvicorn.Server, socket.socket]:
    """uvicorn for `app` and its listening socket, bound here so that the real port is known (port 0).
    Asked to stop, it takes no new connection and gives the requests running (their councils) the
    shutdown grace, COUNCIL_SHUTDOWN_GRACE_S, before it cancels them."""
    # log_config=None: uvicorn's lines go through our root handler (text or JSON, redacted).
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan=lifespan,  # type: ignore[arg-type]
        log_config=None,
        # Past the grace: the stop stops the councils still running when it ends, and their requests
        # and live pages (Server-Sent Events) then end by themselves; uvicorn cancels only what is left.
        timeout_graceful_shutdown=math.ceil(service.settings.serving.shutdown_grace_s) + _AFTER_GRACE_S,
    )
    server = _Server(config)
    service.telemetry.on_stop(lambda: setattr(server, "should_exit", True), ends_command=True)
    return server, bind(host, port)


def announce(service: CouncilService, line: str) -> None:
    """The address, shown whatever LOG_LEVEL says: as it is, or with LOG_FORMAT=json as a log line
    (every line of the process is then one JSON object)."""
    if service.settings.telemetry.log_format == "json":
        _address_log.info(line)
    else:
        print(line, file=sys.stderr)


def bind(host: str, port: int) -> socket.socket:
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    listener = socket.socket(family, kind, proto)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(address)
    except OSError as exc:
        listener.close()
        raise CouncilError(f"Cannot listen on {host}:{port}: {exc.strerror}.") from None
    listener.listen(2048)  # connections made as soon as the address is printed wait in the backlog
    listener.set_inheritable(True)
    return listener


async def serve_mcp_stdio(service: CouncilService) -> None:
    settings = service.settings
    await build_mcp(service, ApiKeys.parse(settings.api.keys, settings.api.trusted_keys)).run_stdio_async()
