"""The one door to the models: routes each call to its provider (core/providers/resolver.py) and
answers what the model lists say (core/providers/catalog.py). It is where model text enters the
council, so secrets are masked here, once, in every completion, streamed piece and error: no event,
store or surface above ever holds one (core/shared/redact.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING

from core.models import ChatMessage, Completion, seats
from core.providers.base import (
    CallOptions,
    KeyProof,
    ProcessStoppingError,
    Provider,
    ProviderError,
    ProviderTimeoutError,
    StreamItem,
    TextDelta,
    redacted_errors,
)
from core.providers.catalog import MODEL_LIST_TTL_S, ModelCatalog
from core.providers.resolver import ProviderResolver
from core.providers.scheduling import Scheduling, local_size_gb, plan_batches
from core.settings import Settings
from core.shared.redact import Redactor, StreamRedactor
from core.telemetry.calls import ModelCall

if TYPE_CHECKING:
    import httpx
    from pydantic import SecretStr

__all__ = ["MODEL_LIST_TTL_S", "ProviderRouter"]


class ProviderRouter:
    def __init__(
        self,
        settings: Settings,
        http_client: httpx.AsyncClient | None = None,
        *,
        single_council: bool = False,
        _parent: ProviderResolver | None = None,
    ):
        """`single_council`: this process runs one council at a time (the terminal), so its calls
        in flight are few; servers leave it False."""
        self.settings = settings
        self._redact = Redactor.from_settings(settings)
        self._resolver = ProviderResolver(settings, http_client, parent=_parent, single_council=single_council)
        self._catalog = ModelCatalog(settings, self._resolver, self._redact)
        # Memory budgets and concurrency per endpoint (core/providers/scheduling.py).
        self.scheduling = Scheduling.from_settings(settings)
        self._memory: dict[str, float] = {}

    def for_endpoint(self, api_key: SecretStr, base_url: str | None = None) -> ProviderRouter:
        """A router whose remote calls all go to one tenant's endpoint with its key (`base_url`, or
        the default endpoint, OpenRouter); it shares this router's connection pool and local models.
        The operator's keys are not in it: a tenant's council cannot spend them."""
        s = self.settings
        endpoint = s.providers.model_copy(
            update={
                "base_url": base_url or s.providers.openrouter_base_url,
                "api_key": api_key,
                "openrouter_api_key": None if base_url else api_key,
            }
        )
        tenant = s.model_copy(update={"providers": endpoint})
        return ProviderRouter(tenant, _parent=self._resolver)

    async def endpoint_models(self) -> list[str]:
        """The model list of the endpoint bare ids go to: one call, every failure raised (redacted).
        Saving a tenant's key checks the key with it."""
        provider, _ = self.resolve("model-list")
        with redacted_errors(self._redact):
            return await provider.list_models()

    def resolve(self, model_id: str) -> tuple[Provider, str]:
        """The provider serving `model_id` and the id it knows the model by."""
        return self._resolver.resolve(model_id)

    def warm_up(self, model_ids: Sequence[str]) -> None:
        """Build the providers (and import their HTTP stack) now, so that the first call's latency
        measures the model and not our imports. Configuration errors surface later, in the call."""
        for model_id in model_ids:
            try:
                self.resolve(model_id)
            except ProviderError:
                pass

    async def complete(self, model_id: str, messages: Sequence[ChatMessage], options: CallOptions) -> Completion:
        provider, model = self.resolve(model_id)
        async with self._slot(model_id, provider):
            self._refuse_when_closed()
            # Measured here, where every call passes (late reviews too): core/telemetry/calls.py.
            call = _measured(model_id, provider, messages, options, streaming=False)
            try:
                with redacted_errors(self._redact):
                    completion = await provider.complete(model, messages, options)
            except BaseException as exc:
                call.failed(exc)
                raise
        completion = self._redact.model(completion.model_copy(update={"model": model_id}))
        call.finished(completion)
        return completion

    async def stream(
        self, model_id: str, messages: Sequence[ChatMessage], options: CallOptions
    ) -> AsyncIterator[StreamItem]:
        provider, model = self.resolve(model_id)
        async with self._slot(model_id, provider):
            self._refuse_when_closed()
            call = _measured(model_id, provider, messages, options, streaming=True)
            completion: Completion | None = None
            pieces = StreamRedactor(self._redact)
            try:
                with redacted_errors(self._redact):
                    async for item in provider.stream(model, messages, options):
                        if isinstance(item, Completion):
                            if held := pieces.flush():
                                yield TextDelta(held)
                            completion = item = self._redact.model(item.model_copy(update={"model": model_id}))
                        else:
                            if item.text:
                                call.first_token()
                            shown = pieces.feed(item.text)
                            if not shown:
                                continue
                            item = TextDelta(shown)
                        yield item
            except BaseException as exc:
                call.failed(exc)
                raise
            call.finished(completion or Completion(model=model_id, text=""))

    def _refuse_when_closed(self) -> None:
        """A call still waiting for its turn (a slot, a retry) when the process closed the providers
        ends as stopped: its HTTP client is gone, and a stop must not read as a provider crash."""
        if self._resolver.closed:
            raise ProcessStoppingError()

    def _slot(self, model_id: str, provider: Provider) -> AbstractAsyncContextManager[None]:
        """The endpoint's memory and concurrency slot a call holds while it runs."""
        weight = self.memory_gb(model_id) if self.scheduling.enabled else 0.0
        return self.scheduling.slot(_endpoint(provider), provider.name, weight)

    def memory_gb(self, model_id: str) -> float:
        """The memory a call of `model_id` holds on its endpoint: MODEL_MEMORY_GB's figure, else for a
        `local:` model its file and context, else 0 (not held back)."""
        if model_id in self.settings.providers.model_memory_gb:
            return self.settings.providers.model_memory_gb[model_id]
        if model_id not in self._memory:
            self._memory[model_id] = self._local_size(model_id)
        return self._memory[model_id]

    def _local_size(self, model_id: str) -> float:
        try:
            provider, model = self.resolve(model_id)
            if provider.name != "local":
                return 0.0
            # only when a budget asks for a local model's size
            from core.providers import gguf_info, local_models

            path = local_models.resolve(model, self.settings).path
            n_ctx = self.settings.local.n_ctx
            try:  # the KV cache of its shape, as the runtime's memory ceiling counts it
                kv = gguf_info.kv_cache_bytes(gguf_info.read_metadata(path), n_ctx)
            except gguf_info.GGUFError:
                kv = None
            return local_size_gb(path.stat().st_size, n_ctx, kv)
        except (ProviderError, OSError):
            return 0.0  # the call itself reports the cause

    def memory_plan(self, model_ids: Sequence[str]) -> list[list[str]]:
        """How `model_ids` would run within their endpoints' memory budgets: batches, largest first
        and first fit, per endpoint (core/providers/scheduling.py); [] without a budget."""
        by_endpoint: dict[tuple[str, str], dict[str, float]] = {}
        for model_id in model_ids:
            try:
                provider, _ = self.resolve(model_id)
            except ProviderError:
                continue
            by_endpoint.setdefault((_endpoint(provider), provider.name), {})[model_id] = self.memory_gb(model_id)
        batches: list[list[str]] = []
        for (endpoint, name), sizes in by_endpoint.items():
            budget = self.scheduling.budget_for(endpoint, name)
            if budget is not None:
                batches += plan_batches(sizes, budget)
        return batches

    def context_window(self, model_id: str) -> int | None:
        """The context window of `model_id` when its provider knows it (local models), else None."""
        provider, model = self.resolve(model_id)
        return provider.context_window(model)

    async def unknown_models(self, model_ids: Sequence[str]) -> list[str]:
        """Ids the provider's model list does not contain. Auth and config errors propagate."""
        return await self._catalog.unknown_models(model_ids)

    async def lineup_problems(self, model_ids: Sequence[str]) -> tuple[list[str], dict[str, str]]:
        """The ids no endpoint knows, and the endpoints (address: why) that did not answer."""
        return await self._catalog.lineup_problems(model_ids)

    async def check_keys(self, timeout_s: float = 15.0) -> list[tuple[str, KeyProof | ProviderError]]:
        """Each configured endpoint's name and what checking its key established (a KeyProof), or
        the error that rejected it. Errors are redacted like every other."""
        outcomes: list[tuple[str, KeyProof | ProviderError]] = []
        for endpoint in self._resolver.endpoints():
            try:
                with redacted_errors(self._redact):
                    async with asyncio.timeout(timeout_s):
                        outcomes.append((endpoint.name, await endpoint.check_key(self._probe_models(endpoint))))
            except TimeoutError:
                outcomes.append((endpoint.name, ProviderTimeoutError(f"no answer within {timeout_s:g} s")))
            except ProviderError as exc:
                outcomes.append((endpoint.name, exc))
        return outcomes

    def _probe_models(self, endpoint: Provider) -> list[str]:
        """The configured models `endpoint` serves, by its ids, cheapest first by MODEL_PRICES
        (unpriced ones after, in configured order): a key check may spend one token on one."""
        s = self.settings
        served: list[str] = []
        for model_id in seats.all_models([*s.default_members, s.default_chairman]):
            try:
                provider, model = self.resolve(model_id)
            except ProviderError:
                continue
            if provider is endpoint and model not in served:
                served.append(model)

        def price(model: str) -> float:
            prompt, completion = s.providers.model_prices.get(model, (float("inf"), float("inf")))
            return prompt + completion

        return sorted(served, key=price)

    async def image_models(self, model_ids: Sequence[str]) -> set[str]:
        """The ids among `model_ids` whose models take images (see ModelCatalog.image_models)."""
        return await self._catalog.image_models(model_ids)

    async def aclose(self) -> None:
        await self._resolver.aclose()


def _endpoint(provider: Provider) -> str:
    """Which endpoint a provider's calls load: its base URL, or its name (`local`)."""
    return str(getattr(provider, "base_url", "") or provider.name).rstrip("/")


def _measured(
    model_id: str, provider: Provider, messages: Sequence[ChatMessage], options: CallOptions, *, streaming: bool
) -> ModelCall:
    return ModelCall(
        model_id,
        provider.name,
        messages,
        max_tokens=options.max_tokens,
        temperature=options.temperature,
        streaming=streaming,
    )
