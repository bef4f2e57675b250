"""What keeps other web sites out of the API: a browser page on another origin must not start
councils (a `no-cors` POST with `text/plain` needs no preflight), and a DNS-rebound name must not
reach a server that listens on loopback without keys.

Starlette's CORSMiddleware (inside this guard) answers preflights and adds the CORS headers for
the origins COUNCIL_API_CORS_ORIGINS allows; it never refuses anything, so the refusals are here.
Starlette's TrustedHostMiddleware is not used: it cuts `[::1]:8000` at the first colon and
answers in plain text, where every refusal of this API is OpenAI-shaped.
"""

from __future__ import annotations

from collections.abc import Collection
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from bot.api.keys import LOOPBACK_HOSTS
from bot.api.openai_types import ApiError

JSON_TYPES = ("application/json",)


def allowed_hosts(configured: Collection[str], bound_host: str) -> frozenset[str] | None:
    """The Host names to answer to; None: any (a server that listens beyond loopback is reached
    under names we cannot know, and needs keys)."""
    if configured:
        return frozenset(host.strip().lower().strip("[]") for host in configured)
    if bound_host in LOOPBACK_HOSTS:
        return LOOPBACK_HOSTS
    return None


def host_name(header: str) -> str | None:
    """`localhost:8000` -> localhost, `[::1]:8000` -> ::1; None when it is not a host."""
    try:
        return urlsplit(f"//{header}").hostname
    except ValueError:
        return None


class CrossSiteGuard:
    """Pure ASGI: a Host not allowed is 421 (as `/mcp` answers it), a browser Origin not allowed
    403, a POST whose body is not declared JSON 415. Allowed origins get CORS headers."""

    def __init__(self, app: ASGIApp, hosts: frozenset[str] | None, origins: Collection[str]):
        self.hosts, self.origins = hosts, frozenset(origin.rstrip("/") for origin in origins)
        self.app = CORSMiddleware(
            app,
            allow_origins=sorted(self.origins),
            allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
            allow_headers=["*"],  # the openai SDK sends a family of x-stainless-* headers; the origin is the gate
            expose_headers=["x-council-id", "retry-after", "x-should-retry", "mcp-session-id"],
            max_age=600,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        error = self.refusal(Headers(scope=scope), scope["method"])
        if error is not None:
            await error.response()(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def refusal(self, headers: Headers, method: str) -> ApiError | None:
        if self.hosts is not None and host_name(headers.get("host", "")) not in self.hosts:
            return ApiError(
                421,
                "This server does not answer to that Host name; set COUNCIL_API_ALLOWED_HOSTS to serve it.",
                "invalid_request_error",
                "host_not_allowed",
            )
        origin = headers.get("origin")
        if origin is not None and origin.rstrip("/") not in self.origins:
            return ApiError(
                403,
                f"Requests from the web origin {origin[:100]} are not allowed; "
                "COUNCIL_API_CORS_ORIGINS lists those that are.",
                "permission_error",
                "origin_not_allowed",
            )
        if method == "POST" and not _is_json(headers.get("content-type", "")):
            return ApiError(
                415,
                "Send the request body as JSON with `Content-Type: application/json`.",
                "invalid_request_error",
                "unsupported_media_type",
            )
        return None


def _is_json(content_type: str) -> bool:
    media = content_type.partition(";")[0].strip().lower()
    return media in JSON_TYPES or (media.startswith("application/") and media.endswith("+json"))
