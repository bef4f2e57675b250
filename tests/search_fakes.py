"""Loopback servers speaking the documented JSON of the search backends (SearXNG, Brave, Tavily).

Each serves the same `FakeHit` list in its own format and records every request, so a test
checks both what the backend sent (query, key header) and what it made of the answer.

- SearXNG: `GET /search?q=...&format=json` -> `{"query", "number_of_results", "results": [{"url",
  "title", "content", "engine", "parsed_url", "template", "engines", "positions", "score",
  "category", "publishedDate"}], "answers", "corrections", "infoboxes", "suggestions",
  "unresponsive_engines"}`; a format other than json (or JSON disabled) is 403, as SearXNG does.
- Brave: `GET /res/v1/web/search?q=...&count=N` with `X-Subscription-Token` -> WebSearchApiResponse
  `{"type": "search", "query": {"original"}, "web": {"type": "search", "results": [{"type":
  "search_result", "title", "url", "description", "age", "page_age", "meta_url", "language",
  "family_friendly"}]}}`; a wrong token is 401 and a spent quota 429 with Brave's ErrorResponse.
- Tavily: `POST /search` with `Authorization: Bearer <key>` and a JSON body -> `{"query", "answer",
  "images", "results": [{"title", "url", "content", "score", "raw_content", "published_date"}],
  "response_time"}`; a wrong key is 401 `{"detail": {"error": ...}}`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse, urlsplit

from aiohttp import web

from tests.loopback_app import LoopbackApp


@dataclass
class FakeHit:
    title: str
    url: str
    snippet: str
    published: str | None = None  # as the backend writes it


@dataclass
class SearchRequest:
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any = None


@dataclass
class Knobs:
    """What the fake does besides answering: delay, a forced status, or a raw body."""

    delay_s: float = 0.0
    status: int | None = None
    raw_body: str | None = None
    redirect_to: str | None = None


@dataclass
class _FakeSearchServer:
    hits: list[FakeHit] = field(default_factory=list)
    knobs: Knobs = field(default_factory=Knobs)
    requests: list[SearchRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._app = LoopbackApp(self._routes())

    def _routes(self) -> list[web.RouteDef]:
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        return self._app.base_url

    async def __aenter__(self) -> Any:
        await self._app.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._app.__aexit__(*exc)

    async def _before(self, request: web.Request) -> web.Response | None:
        body = await request.json() if request.method == "POST" else None
        self.requests.append(SearchRequest(request.path, dict(request.query), dict(request.headers), body))
        if self.knobs.delay_s:
            await asyncio.sleep(self.knobs.delay_s)
        if self.knobs.redirect_to is not None:
            return web.Response(status=302, headers={"Location": self.knobs.redirect_to})
        if self.knobs.raw_body is not None:
            return web.Response(text=self.knobs.raw_body, status=self.knobs.status or 200)
        if self.knobs.status is not None:
            return web.json_response({"error": "forced"}, status=self.knobs.status)
        return None


@dataclass
class FakeSearxng(_FakeSearchServer):
    json_enabled: bool = True

    def _routes(self) -> list[web.RouteDef]:
        return [web.get("/search", self._search)]

    async def _search(self, request: web.Request) -> web.Response:
        early = await self._before(request)
        if early is not None:
            return early
        if request.query.get("format") != "json" or not self.json_enabled:
            return web.Response(status=403, text="403 Forbidden")
        query = request.query.get("q", "")
        results = [
            {
                "url": hit.url,
                "title": hit.title,
                "content": hit.snippet,
                "engine": "duckduckgo",
                "parsed_url": list(urlparse(hit.url)),
                "template": "default.html",
                "engines": ["duckduckgo", "brave"],
                "positions": [index + 1],
                "score": 2.0 / (index + 1),
                "category": "general",
                "publishedDate": hit.published,
            }
            for index, hit in enumerate(self.hits)
        ]
        return web.json_response(
            {
                "query": query,
                "number_of_results": 0,
                "results": results,
                "answers": [],
                "corrections": [],
                "infoboxes": [],
                "suggestions": [f"{query} news"],
                "unresponsive_engines": [["google", "timeout"]],
            }
        )


@dataclass
class FakeBrave(_FakeSearchServer):
    api_key: str = "brave-test-key"

    def _routes(self) -> list[web.RouteDef]:
        return [web.get("/res/v1/web/search", self._search)]

    @property
    def endpoint(self) -> str:
        return self.base_url + "/res/v1/web/search"

    async def _search(self, request: web.Request) -> web.Response:
        early = await self._before(request)
        if early is not None:
            return early
        if request.headers.get("X-Subscription-Token") != self.api_key:
            return _brave_error(401, "SUBSCRIPTION_TOKEN_INVALID", "The provided subscription token is invalid.")
        query = request.query.get("q", "")
        if not query or len(query) > 400:
            return _brave_error(422, "VALIDATION", "Unable to validate request parameter(s)")
        count = int(request.query.get("count", "20"))
        results = [
            {
                "type": "search_result",
                "title": hit.title,
                "url": hit.url,
                "description": hit.snippet,
                "is_source_local": False,
                "is_source_both": False,
                "language": "en",
                "family_friendly": True,
                "meta_url": {
                    "scheme": "https",
                    "netloc": urlsplit(hit.url).netloc,
                    "hostname": urlsplit(hit.url).hostname,
                },
                **({"page_age": hit.published, "age": "2 days ago"} if hit.published else {}),
            }
            for hit in self.hits[:count]
        ]
        body: dict[str, Any] = {"type": "search", "query": {"original": query, "more_results_available": False}}
        if results:
            body["web"] = {"type": "search", "results": results, "family_friendly": True}
        return web.json_response(body)


def _brave_error(status: int, code: str, detail: str) -> web.Response:
    return web.json_response(
        {
            "type": "ErrorResponse",
            "error": {"id": "00000000-0000-0000-0000-000000000000", "status": status, "code": code, "detail": detail},
            "time": 1700000000,
        },
        status=status,
    )


@dataclass
class FakeTavily(_FakeSearchServer):
    api_key: str = "tvly-test-key"

    def _routes(self) -> list[web.RouteDef]:
        return [web.post("/search", self._search)]

    @property
    def endpoint(self) -> str:
        return self.base_url + "/search"

    async def _search(self, request: web.Request) -> web.Response:
        early = await self._before(request)
        if early is not None:
            return early
        if request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return web.json_response({"detail": {"error": "Unauthorized: missing or invalid API key."}}, status=401)
        body = self.requests[-1].body or {}
        if not body.get("query"):
            return web.json_response({"detail": {"error": "Query is missing."}}, status=400)
        count = int(body.get("max_results", 5))
        results = [
            {
                "title": hit.title,
                "url": hit.url,
                "content": hit.snippet,
                "score": round(0.9 - index * 0.1, 2),
                "raw_content": None,
                **({"published_date": hit.published} if hit.published else {}),
            }
            for index, hit in enumerate(self.hits[:count])
        ]
        return web.json_response(
            {"query": body["query"], "answer": None, "images": [], "results": results, "response_time": "0.42"}
        )
