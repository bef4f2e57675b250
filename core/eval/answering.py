"""One configuration answering one question: the council engine in a mode, or one model alone,
with every model call it made counted (calls, tokens, cost) and its wall time.

Eval councils are the operator's: they are configured like a council without a channel (the
admission's `operator_config`: seats, quick seats, reviewer weights) but pass no per-user or
per-channel limit and are not stored in the council history; `--concurrency` paces them.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.engine import prompts
from core.engine.council import run_council
from core.eval import estimate
from core.eval.configs import SELF_MOA, ConfigSpec, require_mode
from core.models import (
    ChatMessage,
    Completion,
    ConversationTurn,
    CouncilConfig,
    CouncilFinished,
    CouncilRequest,
    CouncilResult,
    Origin,
    Platform,
    Usage,
    seats,
)
from core.providers.base import CallOptions, ProviderError, StreamItem
from core.providers.router import ProviderRouter
from core.settings import Settings
from core.shared.redact import Redactor

EVAL_ORIGIN = Origin(platform=Platform.CLI, channel_id="eval", user_id="operator")
ConfigFor = Callable[[str], Awaitable[CouncilConfig]]


@dataclass
class EvalAnswer:
    text: str
    calls: int = 0
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    escalated: bool | None = None  # auto: whether it escalated to the standard council
    error: str | None = None  # why there is no answer (a failed council or call)
    model: str = ""
    consensus: float | None = None  # a council's rubric consensus (0-100)
    agreement_w: float | None = None  # and Kendall's W of its ballots (0-1)

    @property
    def tokens(self) -> int:
        return self.usage.prompt_tokens + self.usage.completion_tokens

    def metadata(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cost_usd": self.usage.cost_usd,
            "escalated": self.escalated,
            "error": self.error,
            "latency_s": self.latency_s,
            "consensus": self.consensus,
            "agreement_w": self.agreement_w,
        }


class CountingRouter:
    """The router as the engine sees it, counting the calls and usage of one council."""

    def __init__(self, router: ProviderRouter) -> None:
        self._router = router
        self.calls = 0
        self.usage = Usage()

    async def complete(self, model_id: str, messages: Sequence[ChatMessage], options: CallOptions) -> Completion:
        self.calls += 1
        completion = await self._router.complete(model_id, messages, options)
        self.usage += completion.usage
        return completion

    async def stream(
        self, model_id: str, messages: Sequence[ChatMessage], options: CallOptions
    ) -> AsyncIterator[StreamItem]:
        self.calls += 1
        async for item in self._router.stream(model_id, messages, options):
            if isinstance(item, Completion):
                self.usage += item.usage
            yield item

    def __getattr__(self, name: str) -> Any:  # context_window, resolve, ...: the router's own
        return getattr(self._router, name)


class Answerer:
    """Answers questions as a configuration; shared by the inspect provider and `council eval`."""

    def __init__(self, settings: Settings, router: ProviderRouter, config_for: ConfigFor, redact: Redactor) -> None:
        self.settings = settings
        self.router = router
        self.config_for = config_for
        self.redact = redact

    async def answer(
        self,
        spec: ConfigSpec,
        question: str,
        history: Sequence[ConversationTurn] = (),
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> EvalAnswer:
        if spec.kind == "council":
            assert spec.mode is not None
            return await self._council(spec.mode, question, history, temperature, max_tokens)
        if spec.kind == "self-moa":
            return await self._council(SELF_MOA, question, history, temperature, max_tokens, self_moa=spec)
        return await self._alone(await self.model_of(spec), question, history, temperature, max_tokens)

    async def self_moa_config(self, spec: ConfigSpec) -> CouncilConfig:
        """Self-MoA as an eval configuration: its model alone, sampled k times (default: the standard
        council's calls less one, so that k samples and the aggregation match them), the same model
        aggregating (not the configured chairman: the baseline is one model)."""
        config = await self.config_for(SELF_MOA)
        model = await self.model_of(spec)
        samples = spec.samples or estimate.standard_calls((await self.config_for("standard")).members) - 1
        return config.model_copy(update={"members": [model], "chairman": model, "samples": samples, "lenses": {}})

    async def model_of(self, spec: ConfigSpec) -> str:
        """The one model a member / chairman / self-consistency / self-moa configuration asks (Self-MoA
        without one, outside `council eval`: the first seat)."""
        if spec.kind == "chairman":
            return seats.primary((await self.config_for("standard")).chairman)
        if spec.kind == "self-moa" and spec.model is None:
            return seats.primary((await self.config_for("standard")).members[0])
        if spec.model is None:
            raise ValueError(f"{spec.name}: no model chosen")
        return spec.model

    async def _council(
        self,
        mode: str,
        question: str,
        history: Sequence[ConversationTurn],
        temperature: float | None,
        max_tokens: int | None,
        self_moa: ConfigSpec | None = None,
    ) -> EvalAnswer:
        require_mode(mode)
        config = await self.self_moa_config(self_moa) if self_moa is not None else await self.config_for(mode)
        updates: dict[str, Any] = {}
        if temperature is not None:
            updates["temperature"] = temperature
        if max_tokens is not None:
            updates["max_answer_tokens"] = max_tokens
        request = CouncilRequest(
            question=question, config=config.model_copy(update=updates), history=list(history), origin=EVAL_ORIGIN
        )
        counting = CountingRouter(self.router)
        start = time.perf_counter()
        result: CouncilResult | None = None
        async for event in run_council(request, counting):  # type: ignore[arg-type]
            if isinstance(event, CouncilFinished):
                result = event.result
        latency = time.perf_counter() - start
        assert result is not None
        synthesis = result.synthesis
        error = None if synthesis is not None else (result.error.short() if result.error else "no answer")
        return EvalAnswer(
            text=synthesis.text if synthesis is not None else "",  # redacted where it entered (the router)
            calls=counting.calls,
            usage=counting.usage,
            latency_s=result.timings.get("total_s", latency),
            escalated=escalated(result),
            error=self.redact(error) if error else None,
            model=f"council/{self_moa.name if self_moa is not None else mode}",
            consensus=result.aggregate.consensus if result.aggregate else None,
            agreement_w=result.aggregate.agreement_w if result.aggregate else None,
        )

    async def _alone(
        self,
        model: str,
        question: str,
        history: Sequence[ConversationTurn],
        temperature: float | None,
        max_tokens: int | None,
    ) -> EvalAnswer:
        """One call with the members' stage-1 prompt: the member alone sees what it sees in a council."""
        options = CallOptions(
            timeout_s=self.settings.council.timeout_s,
            temperature=temperature,
            max_tokens=max_tokens or self.settings.council.max_answer_tokens,
        )
        start = time.perf_counter()
        try:
            completion = await self.router.complete(model, prompts.stage1_messages(question, history), options)
        except ProviderError as exc:
            return EvalAnswer(
                text="",
                calls=1,
                latency_s=time.perf_counter() - start,
                error=self.redact(exc.info().short()),
                model=model,
            )
        return EvalAnswer(
            text=completion.text,  # redacted where it entered (the router)
            calls=1,
            usage=completion.usage,
            latency_s=time.perf_counter() - start,
            model=model,
        )


def escalated(result: CouncilResult) -> bool | None:
    """Whether an `auto` council escalated to the standard council (None for other modes)."""
    if result.request.config.mode != "auto":
        return None
    return result.escalated
