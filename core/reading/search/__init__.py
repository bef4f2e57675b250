"""Web search before stage 1: backends behind one protocol, chosen by settings.

Public interface (what the wiring round uses):

- `SearchResult(title, url, snippet, published: date | None)`: pydantic, frozen; `url` is always
  http(s) and distinct within one answer, snippets are plain text on one line (<= 500 chars).
- `SearchBackend` protocol: `name`, `await search(query, *, max_results) -> list[SearchResult]`,
  `await aclose()`. Errors: `SearchError(message, status)` and its kinds `SearchConfigError`,
  `SearchTimeout`, `SearchAuthError`, `SearchRateLimited`, `SearchUnavailable`,
  `SearchBadResponse`; `message` is one line for the notice ("a failed search is a notice,
  never a failed council"), with no key in it.
- `search_backend_from_settings(settings, client=None) -> SearchBackend | None` (None when
  `COUNCIL_SEARCH=off`); call `search(question, max_results=settings.search.results)`. The
  timeout (`COUNCIL_SEARCH_TIMEOUT_S`) is the backend's own and covers the whole call.
- Backends: `SearxngBackend(base_url, timeout_s=...)`, `BraveBackend(api_key, timeout_s=...,
  endpoint=BRAVE_SEARCH_URL)`, `TavilyBackend(api_key, timeout_s=..., endpoint=TAVILY_SEARCH_URL)`.

Still to wire (not here): the per-channel switch (`/council-admin search on|off`, a default
setting), per-question keyword/option/`--search`, sources fenced and numbered in the prompts,
citations rendered as links by the adapters and listed in exports.
"""

from core.models.search import (
    SearchAuthError,
    SearchBadResponse,
    SearchConfigError,
    SearchError,
    SearchRateLimited,
    SearchResult,
    SearchTimeout,
    SearchUnavailable,
)
from core.reading.search.base import SearchBackend
from core.reading.search.brave import BRAVE_SEARCH_URL, BraveBackend
from core.reading.search.factory import search_backend_from_settings
from core.reading.search.searxng import SearxngBackend
from core.reading.search.tavily import TAVILY_SEARCH_URL, TavilyBackend

__all__ = [
    "BRAVE_SEARCH_URL",
    "TAVILY_SEARCH_URL",
    "BraveBackend",
    "SearchAuthError",
    "SearchBackend",
    "SearchBadResponse",
    "SearchConfigError",
    "SearchError",
    "SearchRateLimited",
    "SearchResult",
    "SearchTimeout",
    "SearchUnavailable",
    "SearxngBackend",
    "TavilyBackend",
    "search_backend_from_settings",
]
