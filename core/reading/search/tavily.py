"""Tavily: `POST https://api.tavily.com/search` with `Authorization: Bearer tvly-...`.

Request body: `{"query", "max_results" (0-20), "search_depth": "basic", "topic": "general",
"include_answer": false, "include_raw_content": false}`. Response: `{"query", "answer", "images",
"results": [{"title", "url", "content", "score", "raw_content", "published_date" (news topic
only)}], "response_time"}`. Besides 401 and 429, Tavily answers 432 (plan limit) and 433
(pay-as-you-go limit) when credits run out; those are reported as rate limits.
"""

from __future__ import annotations

import httpx
from pydantic import SecretStr

from core.models.search import SearchResult
from core.reading.search.base import HttpSearchBackend

TAVILY_SEARCH_URL = "https://api.tavily.com/search"
_MAX_COUNT = 20


class TavilyBackend(HttpSearchBackend):
    name = "Tavily"
    quota_statuses = frozenset({429, 432, 433})

    def __init__(
        self,
        api_key: SecretStr,
        *,
        timeout_s: float,
        endpoint: str = TAVILY_SEARCH_URL,
        client: httpx.AsyncClient | None = None,
    ):
        super().__init__(timeout_s=timeout_s, client=client)
        self._api_key = api_key
        self.endpoint = endpoint

    async def search(self, query: str, *, max_results: int) -> list[SearchResult]:
        payload = await self._request_json(
            "POST",
            self.endpoint,
            json={
                "query": query,
                "max_results": min(max_results, _MAX_COUNT),
                "search_depth": "basic",
                "topic": "general",
                "include_answer": False,
                "include_raw_content": False,
            },
            headers={"Accept": "application/json", "Authorization": f"Bearer {self._api_key.get_secret_value()}"},
        )
        raw = payload.get("results") if isinstance(payload, dict) else None
        return self._results(raw, snippet="content", published="published_date", max_results=max_results)
