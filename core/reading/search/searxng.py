"""SearXNG (self-hosted metasearch): `GET {SEARXNG_URL}/search?q=...&format=json`, no key.

The instance must allow the JSON format (`search.formats` in its settings.yml includes `json`);
an instance that does not answers 403, reported as such. Response: `{"query": ..., "results":
[{"title", "url", "content", "publishedDate" (ISO or null), "engine", ...}], "answers": [...],
"infoboxes": [...], "suggestions": [...], "unresponsive_engines": [...]}`.
"""

from __future__ import annotations

import httpx

from core.models.search import SearchResult
from core.reading.search.base import HttpSearchBackend


class SearxngBackend(HttpSearchBackend):
    name = "SearXNG"
    follow_redirects = True  # no key to leak; instances often redirect http -> https

    def __init__(self, base_url: str, *, timeout_s: float, client: httpx.AsyncClient | None = None):
        super().__init__(timeout_s=timeout_s, client=client)
        self.base_url = base_url.rstrip("/")

    async def search(self, query: str, *, max_results: int) -> list[SearchResult]:
        payload = await self._request_json(
            "GET",
            f"{self.base_url}/search",
            params={"q": query, "format": "json"},
            headers={"Accept": "application/json"},
        )
        raw = payload.get("results") if isinstance(payload, dict) else None
        return self._results(raw, snippet="content", published="publishedDate", max_results=max_results)
