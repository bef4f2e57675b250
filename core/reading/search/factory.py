"""The search backend chosen by settings (`COUNCIL_SEARCH`), or None when search is off."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

from core.models.search import SearchConfigError
from core.reading.search.base import SearchBackend
from core.reading.search.brave import BraveBackend
from core.reading.search.searxng import SearxngBackend
from core.reading.search.tavily import TavilyBackend

if TYPE_CHECKING:
    from core.settings import Settings


def search_backend_from_settings(
    settings: Settings, *, client: httpx.AsyncClient | None = None
) -> SearchBackend | None:
    """`COUNCIL_SEARCH=off` gives None; a backend without its URL or key raises `SearchConfigError`.

    Selecting a backend does not switch search on for every question: the service decides per
    channel and per question; this only builds the client.
    """
    timeout_s = settings.search.timeout_s
    if settings.search.backend == "off":
        return None
    if settings.search.backend == "searxng":
        if not settings.search.searxng_url:
            raise SearchConfigError("COUNCIL_SEARCH=searxng needs SEARXNG_URL (the instance's base URL)")
        return SearxngBackend(settings.search.searxng_url, timeout_s=timeout_s, client=client)
    if settings.search.backend == "brave":
        if settings.search.brave_api_key is None or not settings.search.brave_api_key.get_secret_value():
            raise SearchConfigError("COUNCIL_SEARCH=brave needs BRAVE_API_KEY")
        return BraveBackend(settings.search.brave_api_key, timeout_s=timeout_s, client=client)
    if settings.search.backend == "tavily":
        if settings.search.tavily_api_key is None or not settings.search.tavily_api_key.get_secret_value():
            raise SearchConfigError("COUNCIL_SEARCH=tavily needs TAVILY_API_KEY")
        return TavilyBackend(settings.search.tavily_api_key, timeout_s=timeout_s, client=client)
    raise SearchConfigError(f"unknown COUNCIL_SEARCH backend {settings.search.backend!r}")
