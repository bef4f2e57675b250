"""Which provider serves a model id: `local:NAME`, `openrouter:ID`, or a bare id.

A bare id goes to `LLM_BASE_URL` when set, else to OpenRouter. Only these known prefixes are
split off, because plain ids may contain colons themselves (Ollama's `llama3:8b`). Each provider
is built once, on first use, and shares one pooled HTTP client.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, cast
from urllib.parse import urlsplit

from core.providers.base import Provider, ProviderConfigError
from core.providers.tls import TrustLoader
from core.settings import Settings

if TYPE_CHECKING:
    import httpx
    from pydantic import SecretStr

    from core.providers.openai_compat import OpenAICompatProvider

_OPENROUTER_HEADERS = {"HTTP-Referer": "https://github.com/llm-council-bot", "X-Title": "LLM Council"}
_OPENROUTER_HOST = "openrouter.ai"


def is_openrouter(base_url: str) -> bool:
    """Whether `base_url` is OpenRouter's, by its host (openrouter.ai or a subdomain of it)."""
    host = (urlsplit(base_url).hostname or "").lower()
    return host == _OPENROUTER_HOST or host.endswith("." + _OPENROUTER_HOST)


class ProviderResolver:
    def __init__(
        self,
        settings: Settings,
        http_client: httpx.AsyncClient | None = None,
        *,
        parent: ProviderResolver | None = None,
        single_council: bool = False,
    ):
        self.settings = settings
        self._owns_http = http_client is None and parent is None
        # The terminal's first call waits for the trust store: loading starts now, beside the
        # rest of start-up (core/providers/tls.py).
        self._trust = TrustLoader() if single_council and self._owns_http else None
        self._http_client = http_client
        self._providers: dict[str, Provider] = {}
        # A tenant's resolver (ProviderRouter.for_endpoint) borrows its parent's pooled HTTP client
        # and in-process models: one connection pool, and a GGUF file loaded once per process.
        self._parent = parent
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether this resolver, or the parent whose HTTP client it borrows, has been closed."""
        return self._closed or (self._parent is not None and self._parent.closed)

    def resolve(self, model_id: str) -> tuple[Provider, str]:
        prefix, _, rest = model_id.partition(":")
        if rest and prefix == "local":
            return self._provider("local"), rest
        if rest and prefix == "openrouter":
            return self._provider("openrouter"), rest
        if self.settings.providers.base_url:
            return self._provider("default"), model_id
        if self.settings.providers.openrouter_api_key:
            return self._provider("openrouter"), model_id
        raise ProviderConfigError(
            f"no provider is configured for `{model_id}`: set OPENROUTER_API_KEY, or LLM_BASE_URL "
            "(and LLM_API_KEY) for another OpenAI-compatible endpoint, or use local: models"
        )

    def endpoints(self) -> list[OpenAICompatProvider]:
        """The HTTP endpoints the settings configure: LLM_BASE_URL's, and OpenRouter when it has a key."""
        keys = (["default"] if self.settings.providers.base_url else []) + (
            ["openrouter"] if self.settings.providers.openrouter_api_key else []
        )
        return [cast("OpenAICompatProvider", self._provider(key)) for key in keys]

    def _provider(self, key: str) -> Provider:
        if key == "local" and self._parent is not None:
            return self._parent._provider(key)
        if key not in self._providers:
            self._providers[key] = self._build(key)
        return self._providers[key]

    @property
    def _http(self) -> httpx.AsyncClient:
        """The pooled client, built on first use: httpx and aiohttp cost a third of a second to import,
        which the CLI would otherwise pay before its first line of output."""
        if self._http_client is None and self._parent is not None:
            self._http_client = self._parent._http
        if self._http_client is None:
            import httpx

            timeout = httpx.Timeout(None, connect=10.0)  # per-call deadlines are asyncio timeouts
            connections = self.settings.providers.max_connections
            if self._trust is not None:
                # One council: a dozen calls at most. httpx's own pool is cheap at that size, and
                # not importing aiohttp saves the terminal's `council ask` a tenth of a second
                # (core/providers/transport.py).
                limits = httpx.Limits(max_connections=connections)
                self._http_client = httpx.AsyncClient(timeout=timeout, limits=limits, verify=self._trust.context())
            else:
                from core.providers.transport import AiohttpTransport

                transport = AiohttpTransport(max_connections=connections)
                self._http_client = httpx.AsyncClient(timeout=timeout, transport=transport)
        return self._http_client

    def _build(self, key: str) -> Provider:
        s = self.settings
        if key == "local":
            try:
                from core.providers.local import LocalProvider
            except ImportError as exc:  # pragma: no cover - depends on the optional extra
                raise ProviderConfigError(f"local models are unavailable ({exc}); pip install -e '.[local]'") from None
            return LocalProvider(s)
        if key == "openrouter":
            if s.providers.openrouter_api_key is None:
                raise ProviderConfigError("openrouter: models need OPENROUTER_API_KEY")
            # OpenRouter's model list is public: its key is checked against GET /key.
            return self._endpoint(
                "openrouter",
                s.providers.openrouter_base_url,
                s.providers.openrouter_api_key,
                _OPENROUTER_HEADERS,
                key_path="key",
            )
        assert s.providers.base_url is not None
        if is_openrouter(s.providers.base_url):  # OpenRouter addressed by its URL: its key is checked as above
            return self._endpoint(
                "LLM_BASE_URL endpoint", s.providers.base_url, s.providers.api_key, _OPENROUTER_HEADERS, key_path="key"
            )
        return self._endpoint("LLM_BASE_URL endpoint", s.providers.base_url, s.providers.api_key)

    def _endpoint(
        self,
        name: str,
        base_url: str,
        api_key: SecretStr | None,
        headers: Mapping[str, str] | None = None,
        key_path: str = "models",
    ) -> Provider:
        from core.providers.openai_compat import OpenAICompatProvider

        s = self.settings
        return OpenAICompatProvider(
            name,
            base_url,
            api_key,
            self._http,
            max_retries=s.providers.max_retries,
            retry_base_s=s.providers.retry_base_s,
            retry_max_s=s.providers.retry_max_s,
            extra_headers=headers,
            prices=s.providers.model_prices,
            key_path=key_path,
        )

    async def aclose(self) -> None:
        self._closed = True  # first: a call that gets its slot from now on does not start
        for key, provider in self._providers.items():
            if key == "local" and self._parent is not None:
                continue
            await provider.aclose()
        if self._owns_http and self._http_client is not None:
            await self._http_client.aclose()
