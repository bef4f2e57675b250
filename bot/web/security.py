"""Headers every page carries, and the checks every form post passes.

The Content-Security-Policy is the second wall behind bot/web/render.py: scripts only from the app
itself (one static file, no inline script), images from the app and data: only, connections (the
live view's event stream) to the app only, no frames, no plug-ins, no form posting elsewhere.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Collection
from urllib.parse import urlsplit

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot.api.guard import host_name

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",  # a link a model wrote is followed without this page's address
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
}
CSRF_KEY = "csrf"
CSRF_FIELD = "csrf_token"


class SecurityHeaders:
    """Pure ASGI (a BaseHTTPMiddleware would buffer the live view's event stream), and the Host
    check against DNS rebinding for an app that listens on loopback (`hosts` None: any name)."""

    def __init__(self, app: ASGIApp, hosts: Collection[str] | None):
        self.app, self.hosts = app, hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.hosts is not None:
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            if host_name(host) not in self.hosts:
                await _plain(421, "This server does not answer to that Host name.")(scope, receive, send)
                return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, with_headers)


def _plain(status: int, text: str) -> ASGIApp:
    from starlette.responses import PlainTextResponse

    return PlainTextResponse(text, status_code=status)


def csrf_token(request: Request) -> str:
    """The session's form token (made on first use)."""
    token = request.session.get(CSRF_KEY)
    if not isinstance(token, str):
        token = secrets.token_urlsafe(24)
        request.session[CSRF_KEY] = token
    return token


def form_allowed(request: Request, offered: object, public_url: str | None = None) -> bool:
    """A form post is ours: from our own origin (when the browser says: the address it was served
    at, or COUNCIL_PUBLIC_URL's behind a proxy), with the session's token."""
    origin = request.headers.get("origin")
    if origin is not None and origin != "null":
        ours = {f"{request.url.scheme}://{request.url.netloc}"}
        if public_url:
            parts = urlsplit(public_url)
            ours.add(f"{parts.scheme}://{parts.netloc}")
        if origin.rstrip("/") not in ours:
            return False
    expected = request.session.get(CSRF_KEY)
    return isinstance(expected, str) and isinstance(offered, str) and hmac.compare_digest(expected, offered)
