"""A web search result as the council cites it, and the typed errors of a search backend."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, ConfigDict


class SearchResult(BaseModel):
    """One source: given to members and chairman as a numbered, fenced source and cited as [n]."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    title: str
    url: str  # always http(s): anything else is dropped by the backend
    snippet: str = ""
    published: date | None = None


class SearchError(Exception):
    """A failed search. `message` is one line fit for a notice; it never contains a key or the query URL."""

    def __init__(self, message: str, *, status: int | None = None):
        super().__init__(message)
        self.message = message
        self.status = status


class SearchConfigError(SearchError):
    """The selected backend lacks its URL or key."""


class SearchTimeout(SearchError):
    pass


class SearchAuthError(SearchError):
    """401/403: bad or missing key, or an instance that forbids the JSON API."""


class SearchRateLimited(SearchError):
    pass


class SearchUnavailable(SearchError):
    """Connection failed or the backend answered 5xx (or another unexpected status)."""


class SearchBadResponse(SearchError):
    """The backend answered 200 with something that is not its documented JSON."""
