"""What every page handler shares: the templates, the viewer of a request, HTML or its JSON twin
(the same URL with `Accept: application/json`, as Datasette serves them), and errors as one line."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from bot.web import render
from bot.web.auth import NEXT, WebAuth, next_path, signed_in
from bot.web.security import csrf_token
from core.errors import CouncilError, InputRejected, NotFound, PermissionDenied, RateLimited
from core.models import CouncilResult, Origin, Platform, Review
from core.models.browse import OPERATOR, WEB_CHANNEL, Viewer
from core.models.voice import STAGE_TITLES, STAGE_VIEWS, review_title
from core.service import CouncilService

STATIC = Path(__file__).parent / "static"
WHERE = {Platform.SLACK: "Slack", Platform.DISCORD: "Discord", Platform.CLI: "terminal", Platform.API: "API"}
WEB = "web"  # a council asked in the browser (stored in its asker's `web` channel: Viewer.asking_origin)


class NoViewer(Exception):
    """Nobody we know: sign in (a page) or 401 (JSON, scripts)."""


def wants_json(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    first = accept.split(",")[0].split(";")[0].strip().lower()
    return first == "application/json"


def where(origin: Origin) -> str:
    if origin.channel_id == WEB_CHANNEL and origin.platform is not Platform.API:
        # Asked in the browser: by the operator (stored as a terminal's), or by someone signed in
        # with Slack or Discord (stored in their workspace, under their own user).
        return (
            WEB if origin.platform is Platform.CLI else f"{WEB} · {WHERE.get(origin.platform, origin.platform.value)}"
        )
    name = WHERE.get(origin.platform, origin.platform.value)
    if origin.channel_id and origin.platform in (Platform.SLACK, Platform.DISCORD):
        return f"{name} #{origin.channel_id}"
    return f"{name} ({origin.channel_id})" if origin.channel_id and origin.platform is Platform.API else name


def asker(origin: Origin) -> str | None:
    """Who asked, as the platform named them (None: nobody to name, e.g. the operator's terminal)."""
    name = origin.user_name or origin.user_id
    return None if not name or name == OPERATOR else name


def when(moment: datetime) -> Markup:
    """A time with its zone (UTC, as stored), in a <time> element a script may show locally."""
    utc = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    text = utc.strftime("%Y-%m-%d %H:%M UTC")
    return Markup(f'<time datetime="{escape(utc.isoformat())}">{escape(text)}</time>')


def review_labels(result: CouncilResult, review: Review) -> list[tuple[str, str]]:
    """Each label a review saw and the model it stood for (the reviewer did not know)."""
    labels = review.shown_labels or sorted(result.label_to_model)
    return [(label, result.label_to_model[label]) for label in sorted(labels) if label in result.label_to_model]


def marked(text: str, q: str | None) -> Markup:
    """A search snippet, escaped, with the searched words marked."""
    words = search_words(q)
    if not words:
        return Markup(escape(text))
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\w*", re.IGNORECASE)
    out, last = [], 0
    for found in pattern.finditer(text):
        out += [str(escape(text[last : found.start()])), f"<mark>{escape(found.group(0))}</mark>"]
        last = found.end()
    out.append(str(escape(text[last:])))
    return Markup("".join(out))


def plain_preview(text: str, limit: int = 220) -> str:
    """The start of an answer as one line of plain text (Markdown's marks dropped, not rendered)."""
    flat = " ".join(_MARKS.sub(" ", _FENCED.sub(" … ", text)).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


_FENCED = re.compile(r"^(```|~~~).*?(^\1|\Z)", re.S | re.M)  # a code block: not a preview's words
_MARKS = re.compile(r"[#*_`>|~]+|\[([^\]]*)\]\([^)]*\)")
_WORDS = re.compile(r"\w+", re.UNICODE)


def search_words(q: str | None) -> list[str]:
    return _WORDS.findall(q or "")[:12]


def ballot(review: Review) -> str:
    """The ballot the parser read from a review, with the models' names (as karpathy's app shows it)."""
    if not review.ballot_models:
        return f"none ({review.parse_status.value})"
    return " ".join(f"{i}. {model}" for i, model in enumerate(review.ballot_models, 1))


def safe_url(url: str | None) -> str:
    """A link to somewhere on the web: http(s) only (a search result's URL is not ours)."""
    return url if url and urlsplit(url).scheme in ("http", "https") else "#"


class Pages:
    def __init__(self, service: CouncilService, auth: WebAuth):
        self.service, self.auth = service, auth
        self.env = Environment(
            loader=PackageLoader("bot.web", "templates"), autoescape=select_autoescape(default=True), enable_async=False
        )
        self.env.globals.update(
            static=self.static, md=render.markdown, where=where, ballot=ballot, asker=asker, when=when,
            review_labels=review_labels, marked=marked, plain_preview=plain_preview, review_title=review_title,
            stage_views=STAGE_VIEWS, stage_titles=STAGE_TITLES,
        )  # fmt: skip
        self.env.filters["safe_url"] = safe_url

    @cached_property
    def _versions(self) -> dict[str, str]:
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()[:10] for p in STATIC.iterdir() if p.is_file()}

    def static(self, name: str) -> str:
        """An asset's URL with its content's hash, so that it can be cached for good."""
        return f"/static/{name}?v={self._versions.get(name, '0')}"

    def viewer(self, request: Request) -> Viewer:
        viewer = self.auth.viewer(request)
        if viewer is None:
            raise NoViewer()
        return viewer

    def page(self, request: Request, template: str, status: int = 200, **values: Any) -> HTMLResponse:
        viewer = self.auth.viewer(request)
        html = self.env.get_template(template).render(
            viewer=viewer,
            signed_in=signed_in(request),
            csrf=csrf_token(request),
            **values,
        )
        return HTMLResponse(html, status_code=status, headers={"cache-control": "no-store"})

    def twin(self, request: Request, data: BaseModel | dict[str, Any], template: str, **values: Any) -> Response:
        """The page, or its data as JSON when the request asks for JSON."""
        if wants_json(request):
            body = data.model_dump(mode="json") if isinstance(data, BaseModel) else data
            return JSONResponse(body, headers={"cache-control": "no-store"})
        return self.page(request, template, **values)

    def error(self, request: Request, exc: Exception) -> Response:
        if isinstance(exc, NoViewer):
            if wants_json(request) or "authorization" in request.headers:
                return JSONResponse({"error": "Sign in, or send Authorization: Bearer <key>."}, status_code=401)
            wanted = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            page = "text/html" in request.headers.get("accept", "")  # a page, not an event stream
            if request.method == "GET" and page and next_path(wanted):  # back here once signed in
                request.session[NEXT] = wanted
            return RedirectResponse("/signin", status_code=303)
        status, heading = 400, "Not possible"
        if isinstance(exc, NotFound):
            status, heading = 404, "Not found"
        elif isinstance(exc, PermissionDenied):
            status, heading = 403, "Not allowed"
        elif isinstance(exc, RateLimited):
            status, heading = 429, "Slow down"
        elif not isinstance(exc, InputRejected | CouncilError):
            raise exc
        message = exc.user_message if isinstance(exc, CouncilError) else str(exc)
        if wants_json(request):
            return JSONResponse({"error": message}, status_code=status)
        return self.page(request, "error.html", status=status, status_code=status, heading=heading, message=message)
