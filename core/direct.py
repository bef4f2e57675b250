"""Members as models: each configured member (its seat's primary model) and the chairman answer a
chat directly, alone, without a council. The OpenAI-compatible API lists them beside the council,
so that an outside harness (inspect-ai, lm-eval's `local-chat-completions`, promptfoo) compares the
council with its own members through one endpoint.

A direct call is checked like a council (the caller's budget, and one hit of the hourly rate
limits) and goes to that model only: no fallback of its seat, no stored council, so its cost is not
in `council usage` nor in the daily budget's sum."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from core.admission.channel_limits import ChannelLimits
from core.errors import InputRejected, ModelFailed, NotFound
from core.models import ChatMessage, Completion, CouncilConfig, Origin, seats
from core.providers.base import CallOptions, ProviderError, TextDelta
from core.storage import Storage

if TYPE_CHECKING:
    from core.providers.router import ProviderRouter

ConfigFor = Callable[[Origin], Awaitable[CouncilConfig]]


def direct_models(config: CouncilConfig) -> list[str]:
    """The members' primary models, then the chairman's, each once."""
    return list(dict.fromkeys(seats.primary(seat) for seat in [*config.members, config.chairman]))


class DirectModels:
    def __init__(
        self,
        storage: Storage,
        router: ProviderRouter,
        limits: ChannelLimits,
        config_for: ConfigFor,
        timeout_s: float,
    ) -> None:
        self.storage = storage
        self.router = router
        self.limits = limits
        self.config_for = config_for
        self.timeout_s = timeout_s

    async def available(self, origin: Origin) -> list[str]:
        """The model ids this caller may ask directly: its channel's council's members and chairman."""
        return direct_models(await self.config_for(origin))

    async def complete(
        self,
        origin: Origin,
        model: str,
        messages: Sequence[ChatMessage],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """The model's answer. Raises NotFound (not a member here), InputRejected, RateLimited,
        BudgetExceeded, or ModelFailed with the model's own error."""
        options = await self._admit(origin, model, messages, temperature, max_tokens)
        try:
            return await self.router.complete(model, messages, options)
        except ProviderError as exc:
            raise _failed(exc) from None

    async def stream(
        self,
        origin: Origin,
        model: str,
        messages: Sequence[ChatMessage],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[str | Completion]:
        """The model's answer as text pieces, then its Completion. The checks of `complete` are
        made before the first item; a model that fails mid-way raises ModelFailed there."""
        options = await self._admit(origin, model, messages, temperature, max_tokens)
        return self._pieces(model, messages, options)

    async def _pieces(
        self, model: str, messages: Sequence[ChatMessage], options: CallOptions
    ) -> AsyncIterator[str | Completion]:
        try:
            async for item in self.router.stream(model, messages, options):
                yield item.text if isinstance(item, TextDelta) else item
        except ProviderError as exc:
            raise _failed(exc) from None

    async def _admit(
        self,
        origin: Origin,
        model: str,
        messages: Sequence[ChatMessage],
        temperature: float | None,
        max_tokens: int | None,
    ) -> CallOptions:
        available = await self.available(origin)
        if model not in available:
            raise NotFound(f"`{model}` is not a member or the chairman of this council ({', '.join(available)}).")
        if not any(m.role == "user" and m.content.strip() for m in messages):
            raise InputRejected("messages: no user message to answer.")
        channel = await self.storage.channels.get(origin.channel_key)
        await self.limits.check(origin, channel, record=True)
        return CallOptions(timeout_s=self.timeout_s, temperature=temperature, max_tokens=max_tokens)


def _failed(exc: ProviderError) -> ModelFailed:
    info = exc.info()
    return ModelFailed(f"The model failed: {info.short()}", info.kind.value)
