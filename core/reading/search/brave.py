"""Brave Search API: `GET https://api.search.brave.com/res/v1/web/search?q=...&count=N`.

The key goes in the `X-Subscription-Token` header. Response (WebSearchApiResponse): `{"type":
"search", "query": {...}, "web": {"type": "search", "results": [{"title", "url", "description"
(with <strong> marks), "age" ("2 days ago"), "page_age" (ISO date time), ...}]}, ...}`; `web` is
absent when there are no web results. Queries longer than 400 characters are refused by the API,
so they are cut here.
"""

from __future__ import annotations

import httpx
from pydantic import SecretStr

from core.models.search import SearchBadResponse, SearchResult
from core.reading.search.base import HttpSearchBackend

BRAVE_SEARCH_URL = "https://api.search.brave.com/res/v1/web/search"
_MAX_QUERY_CHARS = 400
_MAX_COUNT = 20


class BraveBackend(HttpSearchBackend):
    name = "Brave"

    def __init__(
        self,
        api_key: SecretStr,
        *,
        timeout_s: float,
        endpoint: str = BRAVE_SEARCH_URL,
        client: httpx.AsyncClient | None = None,
    ):
        super().__init__(timeout_s=timeout_s, client=client)
        self._api_key = api_key
        self.endpoint = endpoint

    async def search(self, query: str, *, max_results: int) -> list[SearchResult]:
        payload = await self._request_json(
            "GET",
            self.endpoint,
            params={"q": query[:_MAX_QUERY_CHARS], "count": min(max_results, _MAX_COUNT)},
            headers={"Accept": "application/json", "X-Subscription-Token": self._api_key.get_secret_value()},
        )
        if not isinstance(payload, dict):
            raise SearchBadResponse("Brave search answered with an unexpected document")
        web = payload.get("web") or {}
        raw = web.get("results", []) if isinstance(web, dict) else None
        return self._results(raw, snippet="description", published="page_age", max_results=max_results)
