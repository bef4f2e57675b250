"""The OpenAI-compatible provider and the router, over real HTTP to the scripted server."""

import asyncio
import socket
import ssl
import time

import httpx
import pytest
import trustme
from pydantic import SecretStr

from core.models import ChatMessage, Completion, ErrorKind
from core.providers.base import (
    AuthError,
    BadResponseError,
    CallOptions,
    ModelNotFoundError,
    ProcessStoppingError,
    ProviderConfigError,
    ProviderTimeoutError,
    ProviderUnavailableError,
    RateLimitedError,
    TextDelta,
)
from core.providers.openai_compat import OpenAICompatProvider
from core.providers.router import ProviderRouter
from core.providers.transport import AiohttpTransport
from core.settings import Settings
from tests.llm_server import Fail, Hang, InvalidJSON, Reply, ScriptedLLMServer, flaky

KEY = "sk-test-SECRET-123"
MESSAGES = [ChatMessage(role="user", content="What is 2+2?")]


@pytest.fixture
async def server():
    async with ScriptedLLMServer() as srv:
        yield srv


@pytest.fixture(params=["aiohttp", "httpcore"])
async def http(request):
    """The router's transport (aiohttp under httpx) and httpx's own, for a caller's own client."""
    transport = AiohttpTransport() if request.param == "aiohttp" else None
    async with httpx.AsyncClient(transport=transport) as client:
        yield client


@pytest.fixture
def provider(server, http):
    return OpenAICompatProvider(
        "test",
        server.base_url,
        SecretStr(KEY),
        http,
        max_retries=3,
        retry_base_s=0.01,
        retry_max_s=1.0,
        prices={"priced": (1.0, 2.0)},
    )


async def test_complete_returns_text_usage_and_cost(server, provider):
    server.script("m", Reply("Four.", cost=0.0012))
    completion = await provider.complete("m", MESSAGES, CallOptions(timeout_s=5))
    assert completion.text == "Four."
    assert completion.usage.completion_tokens == 1 and completion.usage.cost_usd == pytest.approx(0.0012)
    assert server.requests[0].headers["Authorization"] == f"Bearer {KEY}"


async def test_price_table_used_when_provider_reports_no_cost(server, provider):
    server.script("priced", Reply("one two three"))
    completion = await provider.complete("priced", MESSAGES, CallOptions(timeout_s=5))
    expected = (completion.usage.prompt_tokens * 1.0 + 3 * 2.0) / 1_000_000
    assert completion.usage.cost_usd == pytest.approx(expected)


async def test_stream_yields_deltas_then_completion(server, provider):
    server.script("m", Reply("The answer is four, clearly.", cost=0.5))
    items = [item async for item in provider.stream("m", MESSAGES, CallOptions(timeout_s=5))]
    deltas = [i.text for i in items if isinstance(i, TextDelta)]
    assert len(deltas) > 3
    final = items[-1]
    assert isinstance(final, Completion) and final.text == "".join(deltas) == "The answer is four, clearly."
    assert final.usage.cost_usd == 0.5 and final.usage.completion_tokens == 5


async def test_500_then_success_is_retried(server, provider):
    server.script("m", flaky(2, Fail(500), Reply("ok")))
    assert (await provider.complete("m", MESSAGES, CallOptions(timeout_s=5))).text == "ok"
    assert len(server.requests) == 3


async def test_429_honours_retry_after(server, provider):
    server.script("m", flaky(1, Fail(429, "slow down", retry_after="0.3"), Reply("ok")))
    started = time.perf_counter()
    assert (await provider.complete("m", MESSAGES, CallOptions(timeout_s=5))).text == "ok"
    assert 0.28 <= time.perf_counter() - started < 3.0  # waited the 0.3 s asked (a loaded machine adds more)


async def test_429_forever_is_rate_limited_with_cause(server, provider):
    server.script("m", Fail(429, "quota exceeded for this key", retry_after="0"))
    with pytest.raises(RateLimitedError, match="quota exceeded"):
        await provider.complete("m", MESSAGES, CallOptions(timeout_s=5))
    assert len(server.requests) == 4  # 1 + 3 retries


async def test_401_is_auth_error_without_the_key(server, provider):
    server.script("m", Fail(401, "Incorrect API key provided"))
    with pytest.raises(AuthError) as caught:
        await provider.complete("m", MESSAGES, CallOptions(timeout_s=5))
    assert "401" in str(caught.value) and "Incorrect API key" in str(caught.value)
    assert KEY not in str(caught.value) and KEY not in repr(provider)
    assert len(server.requests) == 1  # never retried


async def test_unknown_model(provider):
    with pytest.raises(ModelNotFoundError, match="nope"):
        await provider.complete("nope", MESSAGES, CallOptions(timeout_s=5))


async def test_invalid_json(server, provider):
    server.script("m", InvalidJSON())
    with pytest.raises(BadResponseError, match="not valid JSON"):
        await provider.complete("m", MESSAGES, CallOptions(timeout_s=5))


async def test_hang_times_out_on_time(server, provider):
    server.script("m", Hang())
    started = time.perf_counter()
    with pytest.raises(ProviderTimeoutError, match=r"0\.5 s"):
        await provider.complete("m", MESSAGES, CallOptions(timeout_s=0.5))
    assert time.perf_counter() - started < 5  # the server never answers: only the time limit ends it


async def test_stream_dropped_mid_way_is_typed(server, provider):
    server.script("m", Reply("a b c d e f g h", drop_after_tokens=2))
    with pytest.raises((ProviderUnavailableError, BadResponseError)):
        async for _ in provider.stream("m", MESSAGES, CallOptions(timeout_s=5)):
            pass


async def test_stream_of_unknown_model_is_typed(provider):
    with pytest.raises(ModelNotFoundError):
        async for _ in provider.stream("missing", MESSAGES, CallOptions(timeout_s=5)):
            pass


async def test_connection_refused_is_unavailable(http):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    provider = OpenAICompatProvider("dead", f"http://127.0.0.1:{port}/v1", None, http, max_retries=1, retry_base_s=0.01)
    with pytest.raises(ProviderUnavailableError, match="unreachable"):
        await provider.complete("m", MESSAGES, CallOptions(timeout_s=5))


async def test_router_prefixes(server):
    settings = Settings(LLM_BASE_URL=server.base_url, LLM_API_KEY="k", OPENROUTER_API_KEY="or-key")
    router = ProviderRouter(settings)
    try:
        provider, model = router.resolve("llama3:8b")
        assert model == "llama3:8b" and provider.name == "LLM_BASE_URL endpoint"
        provider, model = router.resolve("openrouter:openai/gpt-5.1")
        assert model == "openai/gpt-5.1" and provider.name == "openrouter"
        server.script("llama3:8b", Reply("hi"))
        completion = await router.complete("llama3:8b", MESSAGES, CallOptions(timeout_s=5))
        assert completion.model == "llama3:8b" and completion.text == "hi"
    finally:
        await router.aclose()


async def test_a_call_that_starts_once_the_router_is_closed_is_a_stop_not_a_crash(server):
    """A council cancelled late at shutdown may still reach the router after it closed (its HTTP
    client gone): the call ends as stopped, and a tenant's router borrowing the client does too."""
    router = ProviderRouter(Settings(LLM_BASE_URL=server.base_url, LLM_API_KEY="k"))
    tenant = router.for_endpoint(SecretStr("tenant-key"), server.base_url)
    server.script("m", Reply("hi"))
    await router.aclose()
    for closed in (router, tenant):
        with pytest.raises(ProcessStoppingError) as stopped:
            await closed.complete("m", MESSAGES, CallOptions(timeout_s=5))
        assert stopped.value.info().kind is ErrorKind.CANCELLED
        with pytest.raises(ProcessStoppingError):
            async for _ in closed.stream("m", MESSAGES, CallOptions(timeout_s=5)):
                pass
    assert server.requests == []


async def test_router_without_any_provider_says_what_to_set():
    router = ProviderRouter(Settings(LLM_BASE_URL="", OPENROUTER_API_KEY=None))
    try:
        with pytest.raises(ProviderConfigError, match="OPENROUTER_API_KEY"):
            router.resolve("openai/gpt-5.1")
    finally:
        await router.aclose()


async def test_unknown_models_checks_the_model_list(server):
    server.script("known-a", Reply("x"))
    router = ProviderRouter(Settings(LLM_BASE_URL=server.base_url, LLM_API_KEY="k"))
    try:
        assert await router.unknown_models(["known-a", "typo-model"]) == ["typo-model"]
    finally:
        await router.aclose()


async def test_parallel_calls_share_one_pool(server):
    server.script("m", Reply("ok", delay_s=0.2))
    router = ProviderRouter(Settings(LLM_BASE_URL=server.base_url, LLM_API_KEY="k"))
    try:
        started = time.perf_counter()
        results = await asyncio.gather(*(router.complete("m", MESSAGES, CallOptions(timeout_s=5)) for _ in range(50)))
        assert all(r.text == "ok" for r in results)
        assert time.perf_counter() - started < 5.0  # one after the other would take 10 s
    finally:
        await router.aclose()


@pytest.mark.parametrize("single_council", [False, True], ids=["aiohttp-pool", "httpx-pool"])
async def test_https_endpoint_is_verified_against_ssl_cert_file(tmp_path, monkeypatch, single_council):
    """Both transports check certificates (the servers' aiohttp pool, and the terminal's httpx pool
    with its trust store loaded on a thread): an unknown CA is refused as unreachable, and
    SSL_CERT_FILE (as with httpx) names the CA to trust."""
    ca = trustme.CA()
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("localhost").configure_cert(server_context)
    async with ScriptedLLMServer(ssl_context=server_context) as tls_server:
        tls_server.script("m", Reply("over TLS"))
        settings = Settings(_env_file=None, LLM_BASE_URL=tls_server.base_url, LLM_API_KEY="k", LLM_MAX_RETRIES=0)
        router = ProviderRouter(settings, single_council=single_council)
        try:
            with pytest.raises(ProviderUnavailableError):
                await router.complete("m", MESSAGES, CallOptions(timeout_s=5))
        finally:
            await router.aclose()
        ca_file = tmp_path / "ca.pem"
        ca.cert_pem.write_to_path(str(ca_file))
        monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
        router = ProviderRouter(settings, single_council=single_council)
        try:
            assert (await router.complete("m", MESSAGES, CallOptions(timeout_s=5))).text == "over TLS"
        finally:
            await router.aclose()
