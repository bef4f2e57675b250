"""What the providers' model lists say about model ids: whether a model exists, whether it takes
images. Each list is fetched at most once per MODEL_LIST_TTL_S per provider."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from core.providers.base import Provider, ProviderError, redacted_errors
from core.providers.resolver import ProviderResolver
from core.settings import Settings

MODEL_LIST_TTL_S = 300.0


class _ListCache:
    """Model lists by provider name, each for MODEL_LIST_TTL_S."""

    def __init__(self) -> None:
        self._lists: dict[str, tuple[float, set[str]]] = {}

    def get(self, provider: Provider) -> set[str] | None:
        cached = self._lists.get(provider.name)
        if cached and time.monotonic() - cached[0] < MODEL_LIST_TTL_S:
            return cached[1]
        return None

    def put(self, provider: Provider, models: set[str]) -> None:
        self._lists[provider.name] = (time.monotonic(), models)


class ModelCatalog:
    def __init__(self, settings: Settings, resolver: ProviderResolver, redact: Callable[[str], str]):
        self.settings = settings
        self._resolver = resolver
        self._redact = redact
        self._model_lists = _ListCache()
        self._image_lists = _ListCache()

    async def unknown_models(self, model_ids: Sequence[str]) -> list[str]:
        """Ids the provider's model list does not contain. Auth and config errors propagate."""
        unknown = []
        for model_id in model_ids:
            provider, model = self._resolver.resolve(model_id)
            known = await self._known(provider)
            if known is not None and model not in known:
                unknown.append(model_id)
        return unknown

    async def lineup_problems(self, model_ids: Sequence[str]) -> tuple[list[str], dict[str, str]]:
        """A start-up check, cached nowhere (an endpoint may list more models by the first council):
        the ids their endpoint's list lacks, and the endpoints (address: why) whose list did not
        answer (refused, timed out, 5xx). Auth and config errors propagate."""
        unknown: list[str] = []
        unreachable: dict[str, str] = {}
        lists: dict[str, set[str] | None] = {}
        for model_id in model_ids:
            provider, model = self._resolver.resolve(model_id)
            if provider.name not in lists:
                lists[provider.name] = await self._listed(provider, unreachable)
            known = lists[provider.name]
            if known is not None and model not in known:
                unknown.append(model_id)
        return unknown, unreachable

    async def _listed(self, provider: Provider, unreachable: dict[str, str]) -> set[str] | None:
        try:
            with redacted_errors(self._redact):
                return set(await provider.list_models())
        except ProviderError as exc:
            if exc.kind.value in ("auth", "config"):
                raise
            if exc.kind.value in ("unavailable", "timeout"):
                where = str(getattr(provider, "base_url", "") or provider.name).rstrip("/")
                unreachable[where] = exc.info().short()
            return None

    async def image_models(self, model_ids: Sequence[str]) -> set[str]:
        """The ids among `model_ids` whose models take images: `COUNCIL_VISION_MODELS` when set,
        else what the provider's model list says. A provider that cannot tell counts as "no"."""
        if self.settings.attachments.vision_models:
            return {m for m in model_ids if m in self.settings.attachments.vision_models}
        found = set()
        for model_id in model_ids:
            try:
                provider, model = self._resolver.resolve(model_id)
            except ProviderError:
                continue
            if model in await self._images(provider):
                found.add(model_id)
        return found

    async def _images(self, provider: Provider) -> set[str]:
        cached = self._image_lists.get(provider)
        if cached is not None:
            return cached
        lookup = getattr(provider, "image_models", None)
        models: set[str] = set()
        if lookup is not None:
            try:
                with redacted_errors(self._redact):
                    models = set(await lookup())
            except ProviderError:
                models = set()  # no list: images are not sent, and the members are told
        self._image_lists.put(provider, models)
        return models

    async def _known(self, provider: Provider) -> set[str] | None:
        cached = self._model_lists.get(provider)
        if cached is not None:
            return cached
        try:
            with redacted_errors(self._redact):
                models = set(await provider.list_models())
        except ProviderError as exc:
            if exc.kind.value in ("auth", "config"):
                raise
            return None  # endpoints without a model list cannot veto an id
        self._model_lists.put(provider, models)
        return models
