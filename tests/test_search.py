"""Search backends against loopback servers that speak each backend's documented JSON."""

from __future__ import annotations

from datetime import date

import pytest
from pydantic import SecretStr

from core.reading.search import (
    BraveBackend,
    SearchAuthError,
    SearchBackend,
    SearchBadResponse,
    SearchConfigError,
    SearchRateLimited,
    SearchResult,
    SearchTimeout,
    SearchUnavailable,
    SearxngBackend,
    TavilyBackend,
    search_backend_from_settings,
)
from core.settings import Settings
from tests.search_fakes import FakeBrave, FakeHit, FakeSearxng, FakeTavily, Knobs

HITS = [
    FakeHit(
        "Rust 1.90 released",
        "https://blog.rust-lang.org/2025/09/18/Rust-1.90.0/",
        "The <strong>Rust</strong> team is happy",
        "2025-09-18T00:00:00",
    ),
    FakeHit(
        "Rust (programming language)",
        "https://en.wikipedia.org/wiki/Rust_(programming_language)",
        "Rust is a &quot;general-purpose&quot; language",
        None,
    ),
    FakeHit("Duplicate of the first", "https://blog.rust-lang.org/2025/09/18/Rust-1.90.0/", "same URL again", None),
    FakeHit("Not a web link", "javascript:alert(1)", "must never become a citation", None),
    FakeHit("Third distinct", "http://example.org/rust", "plain", "Thu, 18 Sep 2025 10:00:00 GMT"),
    FakeHit("Fourth distinct", "https://example.com/4", "four", "not a date"),
]


async def test_searxng_sends_the_documented_query_and_parses_results():
    async with FakeSearxng(hits=HITS) as server:
        backend = SearxngBackend(server.base_url + "/", timeout_s=5)
        try:
            results = await backend.search("rust release", max_results=3)
        finally:
            await backend.aclose()
    assert server.requests[0].path == "/search"
    assert server.requests[0].query == {"q": "rust release", "format": "json"}
    assert [r.url for r in results] == [
        "https://blog.rust-lang.org/2025/09/18/Rust-1.90.0/",
        "https://en.wikipedia.org/wiki/Rust_(programming_language)",
        "http://example.org/rust",
    ]
    assert results[0] == SearchResult(
        title="Rust 1.90 released",
        url="https://blog.rust-lang.org/2025/09/18/Rust-1.90.0/",
        snippet="The Rust team is happy",
        published=date(2025, 9, 18),
    )
    assert results[1].snippet == 'Rust is a "general-purpose" language'
    assert results[1].published is None
    assert results[2].published == date(2025, 9, 18)


async def test_brave_sends_key_header_and_count_and_parses_web_results():
    async with FakeBrave(hits=HITS) as server:
        backend = BraveBackend(SecretStr(server.api_key), timeout_s=5, endpoint=server.endpoint)
        try:
            results = await backend.search("rust release", max_results=4)
        finally:
            await backend.aclose()
    sent = server.requests[0]
    assert sent.query == {"q": "rust release", "count": "4"}
    assert sent.headers["X-Subscription-Token"] == server.api_key
    # Four asked, four served: one duplicate URL and one javascript: URL are dropped, leaving two.
    assert [r.title for r in results] == ["Rust 1.90 released", "Rust (programming language)"]
    assert results[0].snippet == "The Rust team is happy"
    assert results[0].published == date(2025, 9, 18)


async def test_tavily_posts_the_documented_body_with_a_bearer_key():
    async with FakeTavily(hits=HITS) as server:
        backend = TavilyBackend(SecretStr(server.api_key), timeout_s=5, endpoint=server.endpoint)
        try:
            results = await backend.search("rust release", max_results=5)
        finally:
            await backend.aclose()
    sent = server.requests[0]
    assert sent.headers["Authorization"] == f"Bearer {server.api_key}"
    assert sent.body == {
        "query": "rust release",
        "max_results": 5,
        "search_depth": "basic",
        "topic": "general",
        "include_answer": False,
        "include_raw_content": False,
    }
    assert [r.url for r in results] == [
        "https://blog.rust-lang.org/2025/09/18/Rust-1.90.0/",
        "https://en.wikipedia.org/wiki/Rust_(programming_language)",
        "http://example.org/rust",
    ]
    assert results[2].published == date(2025, 9, 18)


@pytest.mark.parametrize("status", [429, 432, 433])
async def test_tavily_out_of_credits_is_rate_limited(status):
    async with FakeTavily(hits=HITS, knobs=Knobs(status=status)) as server:
        backend = TavilyBackend(SecretStr(server.api_key), timeout_s=5, endpoint=server.endpoint)
        try:
            with pytest.raises(SearchRateLimited, match=f"HTTP {status}"):
                await backend.search("q", max_results=5)
        finally:
            await backend.aclose()


async def test_tavily_wrong_key_is_an_auth_error_without_the_key():
    async with FakeTavily(hits=HITS) as server:
        backend = TavilyBackend(SecretStr("tvly-wrong-secret"), timeout_s=5, endpoint=server.endpoint)
        try:
            with pytest.raises(SearchAuthError) as caught:
                await backend.search("q", max_results=5)
        finally:
            await backend.aclose()
    assert "tvly-wrong-secret" not in str(caught.value)


async def test_keyed_backends_do_not_follow_redirects_with_their_key():
    async with FakeBrave(hits=HITS) as elsewhere, FakeTavily(hits=HITS) as other_tavily:
        async with (
            FakeBrave(hits=HITS, knobs=Knobs(redirect_to=elsewhere.endpoint)) as brave_server,
            FakeTavily(hits=HITS, knobs=Knobs(redirect_to=other_tavily.endpoint)) as tavily_server,
        ):
            backends = [
                BraveBackend(SecretStr(brave_server.api_key), timeout_s=5, endpoint=brave_server.endpoint),
                TavilyBackend(SecretStr(tavily_server.api_key), timeout_s=5, endpoint=tavily_server.endpoint),
            ]
            for backend in backends:
                try:
                    with pytest.raises(SearchUnavailable, match="HTTP 302"):
                        await backend.search("q", max_results=5)
                finally:
                    await backend.aclose()
    assert elsewhere.requests == [] and other_tavily.requests == []


async def test_searxng_follows_its_instance_redirects():
    async with FakeSearxng(hits=HITS) as target:
        async with FakeSearxng(knobs=Knobs(redirect_to=target.base_url + "/search?q=q&format=json")) as moved:
            backend = SearxngBackend(moved.base_url, timeout_s=5)
            try:
                assert len(await backend.search("q", max_results=5)) == 4
            finally:
                await backend.aclose()


async def test_brave_without_web_results_is_an_empty_list():
    async with FakeBrave(hits=[]) as server:
        backend = BraveBackend(SecretStr(server.api_key), timeout_s=5, endpoint=server.endpoint)
        try:
            assert await backend.search("nothing at all", max_results=5) == []
        finally:
            await backend.aclose()


async def test_brave_cuts_queries_to_the_documented_400_characters():
    async with FakeBrave(hits=HITS) as server:
        backend = BraveBackend(SecretStr(server.api_key), timeout_s=5, endpoint=server.endpoint)
        try:
            results = await backend.search("x" * 1000, max_results=1)
        finally:
            await backend.aclose()
    assert len(server.requests[0].query["q"]) == 400
    assert len(results) == 1


async def test_brave_wrong_key_is_an_auth_error_without_the_key():
    async with FakeBrave(hits=HITS) as server:
        backend = BraveBackend(SecretStr("wrong-secret-key"), timeout_s=5, endpoint=server.endpoint)
        try:
            with pytest.raises(SearchAuthError) as caught:
                await backend.search("q", max_results=5)
        finally:
            await backend.aclose()
    assert caught.value.status == 401
    assert "wrong-secret-key" not in str(caught.value)
    assert "\n" not in caught.value.message


@pytest.mark.parametrize(
    ("knobs", "error"),
    [
        (Knobs(status=429), SearchRateLimited),
        (Knobs(status=503), SearchUnavailable),
        (Knobs(raw_body="<html>oops</html>"), SearchBadResponse),
        (Knobs(raw_body='{"results": "not a list"}'), SearchBadResponse),
        (Knobs(delay_s=2.0), SearchTimeout),
    ],
)
async def test_searxng_failures_are_typed(knobs, error):
    async with FakeSearxng(hits=HITS, knobs=knobs) as server:
        backend = SearxngBackend(server.base_url, timeout_s=0.5)
        try:
            with pytest.raises(error) as caught:
                await backend.search("q", max_results=5)
        finally:
            await backend.aclose()
    assert caught.value.message.startswith("SearXNG search")


async def test_searxng_with_json_disabled_is_reported_as_refused():
    async with FakeSearxng(hits=HITS, json_enabled=False) as server:
        backend = SearxngBackend(server.base_url, timeout_s=5)
        try:
            with pytest.raises(SearchAuthError, match="HTTP 403"):
                await backend.search("q", max_results=5)
        finally:
            await backend.aclose()


async def test_unreachable_backend_is_unavailable():
    async with FakeSearxng() as server:
        dead_url = server.base_url
    backend = SearxngBackend(dead_url, timeout_s=2)
    try:
        with pytest.raises(SearchUnavailable, match="unreachable"):
            await backend.search("q", max_results=5)
    finally:
        await backend.aclose()


def _settings(monkeypatch, **values) -> Settings:
    for name in ("SEARXNG_URL", "BRAVE_API_KEY", "TAVILY_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return Settings(_env_file=None, **values)


def test_settings_defaults(monkeypatch):
    settings = _settings(monkeypatch)
    assert settings.search.backend == "off"
    assert settings.search.results == 5
    assert settings.search.timeout_s == 10.0
    assert search_backend_from_settings(settings) is None


async def test_factory_builds_the_selected_backend(monkeypatch):
    async with FakeSearxng(hits=HITS) as server:
        settings = _settings(
            monkeypatch, COUNCIL_SEARCH=" SearXNG ", SEARXNG_URL=server.base_url, COUNCIL_SEARCH_TIMEOUT_S=3
        )
        backend = search_backend_from_settings(settings)
        assert isinstance(backend, SearxngBackend) and isinstance(backend, SearchBackend)
        assert backend.timeout_s == 3
        try:
            results = await backend.search("q", max_results=settings.search.results)
        finally:
            await backend.aclose()
    assert len(results) == 4
    brave = search_backend_from_settings(_settings(monkeypatch, COUNCIL_SEARCH="brave", BRAVE_API_KEY="k"))
    assert isinstance(brave, BraveBackend)
    await brave.aclose()
    tavily = search_backend_from_settings(_settings(monkeypatch, COUNCIL_SEARCH="tavily", TAVILY_API_KEY="tvly-k"))
    assert isinstance(tavily, TavilyBackend)
    await tavily.aclose()


@pytest.mark.parametrize(
    ("values", "missing"),
    [
        ({"COUNCIL_SEARCH": "searxng", "SEARXNG_URL": " "}, "SEARXNG_URL"),
        ({"COUNCIL_SEARCH": "brave"}, "BRAVE_API_KEY"),
    ],
)
def test_factory_names_the_missing_setting(monkeypatch, values, missing):
    with pytest.raises(SearchConfigError, match=missing):
        search_backend_from_settings(_settings(monkeypatch, **values))


def test_blank_backend_means_off_and_unknown_is_rejected(monkeypatch):
    assert _settings(monkeypatch, COUNCIL_SEARCH="").search.backend == "off"
    with pytest.raises(ValueError):
        _settings(monkeypatch, COUNCIL_SEARCH="google")


def test_api_key_never_prints(monkeypatch):
    settings = _settings(monkeypatch, COUNCIL_SEARCH="brave", BRAVE_API_KEY="super-secret-brave")
    assert "super-secret-brave" not in repr(settings)
    assert "super-secret-brave" not in str(settings.model_dump())
