"""What a search backend offers, and the HTTP plumbing the backends share."""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Iterable
from datetime import date, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlsplit

import httpx

from core.models.search import (
    SearchAuthError,
    SearchBadResponse,
    SearchRateLimited,
    SearchResult,
    SearchTimeout,
    SearchUnavailable,
)

MAX_SNIPPET_CHARS = 500
_TAG = re.compile(r"<[^>]{0,200}>")


@runtime_checkable
class SearchBackend(Protocol):
    """`search` returns at most `max_results` results, best first, or raises a `SearchError`."""

    name: str

    async def search(self, query: str, *, max_results: int) -> list[SearchResult]: ...

    async def aclose(self) -> None: ...


class HttpSearchBackend:
    """Shared by the backends: one httpx client, one deadline per search, statuses as typed errors."""

    name = "http"
    # Statuses that mean "too many requests or no credits left" for this backend.
    quota_statuses: frozenset[int] = frozenset({429})
    # Keyed backends never follow redirects: httpx would carry a custom key header to any host.
    follow_redirects = False

    def __init__(self, *, timeout_s: float, client: httpx.AsyncClient | None = None):
        self.timeout_s = timeout_s
        self._owns_client = client is None
        self._client = client or httpx.AsyncClient(timeout=httpx.Timeout(timeout_s))

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    async def _request_json(self, method: str, url: str, **kwargs: Any) -> Any:
        label = self.name
        try:
            async with asyncio.timeout(self.timeout_s):
                response = await self._client.request(method, url, follow_redirects=self.follow_redirects, **kwargs)
        except (TimeoutError, httpx.TimeoutException) as exc:
            raise SearchTimeout(f"{label} search timed out after {self.timeout_s:g} s") from exc
        except httpx.HTTPError as exc:
            raise SearchUnavailable(f"{label} search is unreachable ({type(exc).__name__})") from exc
        status = response.status_code
        if status in (401, 403):
            raise SearchAuthError(f"{label} search refused the request (HTTP {status})", status=status)
        if status in self.quota_statuses:
            raise SearchRateLimited(f"{label} search is rate limited or out of credits (HTTP {status})", status=status)
        if status != 200:
            raise SearchUnavailable(f"{label} search failed (HTTP {status})", status=status)
        try:
            return response.json()
        except ValueError as exc:
            raise SearchBadResponse(f"{label} search answered with something other than JSON") from exc

    def _results(self, raw: Any, *, snippet: str, published: str, max_results: int) -> list[SearchResult]:
        """The backend's raw result items (title, url, `snippet`, `published` fields) as results."""
        if not isinstance(raw, list):
            raise SearchBadResponse(f"{self.name} search answered without a results list")
        candidates = (
            result_from(item.get("title"), item.get("url"), item.get(snippet), item.get(published))
            for item in raw
            if isinstance(item, dict)
        )
        return top_results((r for r in candidates if r is not None), max_results)


def clean_text(value: Any, limit: int = MAX_SNIPPET_CHARS) -> str:
    """Snippet text without HTML tags or entities (Brave marks matches with <strong>), on one line."""
    if not isinstance(value, str):
        return ""
    text = " ".join(html.unescape(_TAG.sub("", value)).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def parse_date(value: Any) -> date | None:
    """ISO 8601 ("2025-11-02", "2025-11-02T10:00:00Z") or RFC 2822 dates; anything else is None."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).date()
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(text).date()
    except (TypeError, ValueError, IndexError):
        return None


def is_web_url(url: Any) -> bool:
    if not isinstance(url, str):
        return False
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def top_results(candidates: Iterable[SearchResult], max_results: int) -> list[SearchResult]:
    """The first `max_results` results with distinct URLs, in the backend's order."""
    seen: set[str] = set()
    chosen: list[SearchResult] = []
    for result in candidates:
        if result.url in seen:
            continue
        seen.add(result.url)
        chosen.append(result)
        if len(chosen) >= max_results:
            break
    return chosen


def result_from(title: Any, url: Any, snippet: Any, published: Any) -> SearchResult | None:
    """A result from a backend's raw fields, or None when it has no usable web URL."""
    if not is_web_url(url):
        return None
    return SearchResult(
        title=clean_text(title, 200) or str(url),
        url=str(url),
        snippet=clean_text(snippet),
        published=parse_date(published),
    )
