"""Routes a model id to its provider: `local:NAME`, `openrouter:ID`, or a bare id.

A bare id goes to `LLM_BASE_URL` when set, else to OpenRouter. Only these known prefixes are
split off, because plain ids may contain colons themselves (Ollama's `llama3:8b`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from core.models import ChatMessage, Completion
from core.providers.base import CallOptions, Provider, ProviderConfigError, ProviderError, StreamItem
from core.redact import Redactor
from core.settings import Settings

if TYPE_CHECKING:
    import httpx
    from pydantic import SecretStr

MODEL_LIST_TTL_S = 300.0
_OPENROUTER_HEADERS = {"HTTP-Referer": "https://github.com/llm-council-bot", "X-Title": "LLM Council"}


class ProviderRouter:
    def __init__(self, settings: Settings, http_client: httpx.AsyncClient | None = None):
        self.settings = settings
        self._owns_http = http_client is None
        self._http_client = http_client
        self._providers: dict[str, Provider] = {}
        self._model_lists: dict[str, tuple[float, set[str]]] = {}
        self._image_lists: dict[str, tuple[float, set[str]]] = {}
        self._redact = Redactor.from_settings(settings)

    # ------------------------------------------------------------------ routing

    def resolve(self, model_id: str) -> tuple[Provider, str]:
        prefix, _, rest = model_id.partition(":")
        if rest and prefix == "local":
            return self._provider("local"), rest
        if rest and prefix == "openrouter":
            return self._provider("openrouter"), rest
        if self.settings.llm_base_url:
            return self._provider("default"), model_id
        if self.settings.openrouter_api_key:
            return self._provider("openrouter"), model_id
        raise ProviderConfigError(
            f"no provider is configured for `{model_id}`: set OPENROUTER_API_KEY, or LLM_BASE_URL "
            "(and LLM_API_KEY) for another OpenAI-compatible endpoint, or use local: models"
        )

    def warm_up(self, model_ids: Sequence[str]) -> None:
        """Build the providers (and import their HTTP stack) now, so that the first call's latency
        measures the model and not our imports. Configuration errors surface later, in the call."""
        for model_id in model_ids:
            try:
                self.resolve(model_id)
            except ProviderError:
                pass

    def _provider(self, key: str) -> Provider:
        if key not in self._providers:
            self._providers[key] = self._build(key)
        return self._providers[key]

    @property
    def _http(self) -> httpx.AsyncClient:
        """The pooled client, built on first use: httpx and aiohttp cost a third of a second to import,
        which the CLI would otherwise pay before its first line of output."""
        if self._http_client is None:
            import httpx

            from core.providers.transport import AiohttpTransport

            self._http_client = httpx.AsyncClient(
                timeout=httpx.Timeout(None, connect=10.0),  # per-call deadlines are asyncio timeouts
                transport=AiohttpTransport(max_connections=self.settings.llm_max_connections),
            )
        return self._http_client

    def _build(self, key: str) -> Provider:
        s = self.settings
        if key == "local":
            try:
                from core.providers.local import LocalProvider
            except ImportError as exc:  # pragma: no cover - depends on the optional extra
                raise ProviderConfigError(f"local models are unavailable ({exc}); pip install -e '.[local]'") from None
            return LocalProvider(s)
        from core.providers.openai_compat import OpenAICompatProvider

        def endpoint(
            name: str, base_url: str, api_key: SecretStr | None, headers: Mapping[str, str] | None = None
        ) -> Provider:
            return OpenAICompatProvider(
                name,
                base_url,
                api_key,
                self._http,
                max_retries=s.llm_max_retries,
                retry_base_s=s.llm_retry_base_s,
                retry_max_s=s.llm_retry_max_s,
                extra_headers=headers,
                prices=s.model_prices,
            )

        if key == "openrouter":
            if s.openrouter_api_key is None:
                raise ProviderConfigError("openrouter: models need OPENROUTER_API_KEY")
            return endpoint("openrouter", s.openrouter_base_url, s.openrouter_api_key, _OPENROUTER_HEADERS)
        assert s.llm_base_url is not None
        return endpoint("LLM_BASE_URL endpoint", s.llm_base_url, s.llm_api_key)

    # ------------------------------------------------------------------ calls

    async def complete(self, model_id: str, messages: Sequence[ChatMessage], options: CallOptions) -> Completion:
        provider, model = self.resolve(model_id)
        with self._redacted_errors():
            completion = await provider.complete(model, messages, options)
        return completion.model_copy(update={"model": model_id})

    async def stream(
        self, model_id: str, messages: Sequence[ChatMessage], options: CallOptions
    ) -> AsyncIterator[StreamItem]:
        provider, model = self.resolve(model_id)
        with self._redacted_errors():
            async for item in provider.stream(model, messages, options):
                yield item.model_copy(update={"model": model_id}) if isinstance(item, Completion) else item

    def context_window(self, model_id: str) -> int | None:
        """The context window of `model_id` when its provider knows it (local models), else None."""
        provider, model = self.resolve(model_id)
        return provider.context_window(model)

    async def unknown_models(self, model_ids: Sequence[str]) -> list[str]:
        """Ids the provider's model list does not contain. Auth and config errors propagate."""
        unknown = []
        for model_id in model_ids:
            provider, model = self.resolve(model_id)
            known = await self._known(provider)
            if known is not None and model not in known:
                unknown.append(model_id)
        return unknown

    async def image_models(self, model_ids: Sequence[str]) -> set[str]:
        """The ids among `model_ids` whose models take images: `COUNCIL_VISION_MODELS` when set,
        else what the provider's model list says. A provider that cannot tell counts as "no"."""
        if self.settings.vision_models:
            return {m for m in model_ids if m in self.settings.vision_models}
        found = set()
        for model_id in model_ids:
            try:
                provider, model = self.resolve(model_id)
            except ProviderError:
                continue
            if model in await self._images(provider):
                found.add(model_id)
        return found

    async def _images(self, provider: Provider) -> set[str]:
        cached = self._image_lists.get(provider.name)
        if cached and time.monotonic() - cached[0] < MODEL_LIST_TTL_S:
            return cached[1]
        lookup = getattr(provider, "image_models", None)
        models: set[str] = set()
        if lookup is not None:
            try:
                with self._redacted_errors():
                    models = set(await lookup())
            except ProviderError:
                models = set()  # no list: images are not sent, and the members are told
        self._image_lists[provider.name] = (time.monotonic(), models)
        return models

    async def _known(self, provider: Provider) -> set[str] | None:
        cached = self._model_lists.get(provider.name)
        if cached and time.monotonic() - cached[0] < MODEL_LIST_TTL_S:
            return cached[1]
        try:
            with self._redacted_errors():
                models = set(await provider.list_models())
        except ProviderError as exc:
            if exc.kind.value in ("auth", "config"):
                raise
            return None  # endpoints without a model list cannot veto an id
        self._model_lists[provider.name] = (time.monotonic(), models)
        return models

    @contextmanager
    def _redacted_errors(self) -> Iterator[None]:
        """Provider messages quote error bodies, and some endpoints quote the caller's key back."""
        try:
            yield
        except ProviderError as exc:
            exc.message = self._redact(exc.message)
            exc.args = (exc.message,)
            raise

    async def aclose(self) -> None:
        for provider in self._providers.values():
            await provider.aclose()
        if self._owns_http and self._http_client is not None:
            await self._http_client.aclose()
