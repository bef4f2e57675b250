"""The browser app: a Starlette application over the council service (server-rendered Jinja2
pages, one small script of our own, SVG charts; no Node, no CDN: every asset is in this package).

    GET  /                      history: search (?q=), filters, keyset pages; a box to ask
    GET  /c/<id>                one council (a unique start of its id too); live while it runs
    GET  /c/<id>/events         its events as Server-Sent Events (Last-Event-ID resumes)
    POST /c/<id>/stop           Stop, or Synthesize now (action=synthesize)
    GET  /c/<id>/export.md|json
    GET  /leaderboard, /eval    ratings, bias audit and feedback; stored `council eval` runs
    GET|POST /ask               ask a council: question, files, mode, members and chairman
    /signin, /signin/slack|discord(/callback), POST /signout

Every page is JSON too (`Accept: application/json`). Served by `council web`, or by `council api`
on its own port with COUNCIL_WEB=on (bot/api/server.py mounts it beside the API).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from bot.api.guard import allowed_hosts
from bot.web.actions import Actions
from bot.web.auth import WebAuth
from bot.web.context import STATIC, NoViewer, Pages
from bot.web.live import LiveEvents
from bot.web.pages import ReadPages
from bot.web.security import SecurityHeaders
from core.errors import CouncilError
from core.service import CouncilService

SESSION_COOKIE = "council_session"
# The cookie may outlive its session: what signs someone in is the session's record on the server
# (core/channels/sessions.py), which ends much sooner unless it is used.
SESSION_MAX_AGE_S = 7 * 24 * 3600

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


def _guarded(pages: Pages, handler: Handler) -> Handler:
    """Who the request is, found once; refusals as pages (or JSON), one line each: never a traceback."""

    async def endpoint(request: Request) -> Response:
        try:
            await pages.auth.identify(request, pages.service.sessions)
            return await handler(request)
        except (CouncilError, NoViewer) as exc:
            return pages.error(request, exc)

    return endpoint


def web_routes(service: CouncilService, auth: WebAuth) -> list[Any]:
    pages = Pages(service, auth)
    read, act, live = ReadPages(pages), Actions(pages), LiveEvents(pages)
    service.sessions.admin_check = act.admin_still

    def route(path: str, handler: Handler, methods: tuple[str, ...] = ("GET",)) -> Route:
        return Route(path, _guarded(pages, handler), methods=list(methods))

    async def signin_page(request: Request) -> Response:
        return act.signin_page(request)

    return [
        route("/", read.history),
        route("/c/{council_id}", read.council),
        route("/c/{council_id}/events", live.events),
        route("/c/{council_id}/stop", act.stop, ("POST",)),
        route("/c/{council_id}/export.{fmt:str}", read.export),
        route("/leaderboard", read.leaderboard),
        route("/eval", read.eval_runs),
        route("/ask", act.ask_form),
        route("/ask", act.ask, ("POST",)),
        route("/signin", signin_page),
        route("/signin/slack", act.slack_start),
        route("/signin/slack/callback", act.slack_callback),
        route("/signin/discord", act.discord_start),
        route("/signin/discord/callback", act.discord_callback),
        route("/signin/discord/guild", act.discord_guild, ("POST",)),
        route("/signout", act.signout, ("POST",)),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]


def session_middleware(service: CouncilService) -> Middleware:
    settings = service.settings
    secret = settings.web.session_secret.get_secret_value() if settings.web.session_secret else secrets.token_hex(32)
    https = bool(settings.tenants.public_url and settings.tenants.public_url.startswith("https://"))
    return Middleware(
        SessionMiddleware,
        secret_key=secret,
        session_cookie=SESSION_COOKIE,
        max_age=SESSION_MAX_AGE_S,
        same_site="lax",  # sent on the top-level return from Slack's or Discord's sign-in page
        https_only=https,
    )


def create_web_app(service: CouncilService, host: str, *, lifespan: Any = None) -> ASGIApp:
    """The app for `council web` bound to `host` (which decides, with the settings, who may read)."""
    auth = WebAuth.from_settings(service.settings, host)
    app = Starlette(routes=web_routes(service, auth), middleware=[session_middleware(service)], lifespan=lifespan)
    return SecurityHeaders(app, _hosts(service, host))


def _hosts(service: CouncilService, bound: str) -> frozenset[str] | None:
    """The Host names answered (guard.allowed_hosts), and COUNCIL_PUBLIC_URL's: behind a proxy on
    loopback, the public name is what browsers send."""
    hosts = allowed_hosts(service.settings.api.allowed_hosts, bound)
    public = urlsplit(service.settings.tenants.public_url or "").hostname
    return hosts | {public} if hosts is not None and public else hosts


# The API's own paths, when both share a port: everything else is the browser app's.
API_PREFIXES = ("/v1/", "/mcp", "/health", "/ready", "/metrics")


class Beside:
    """One port, two apps: the API's paths to the API (its guard, its keys), the rest to the web app."""

    def __init__(self, api: ASGIApp, web: ASGIApp):
        self.api, self.web = api, web

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.api(scope, receive, send)  # the API's lifespan runs the MCP session manager
            return
        path = scope.get("path", "")
        target = self.api if path.startswith(API_PREFIXES) or path == "/v1" else self.web
        await target(scope, receive, send)
