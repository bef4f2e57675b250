"""The council as an inspect-ai model provider: `--model council/standard` (also `council/quick`,
`council/auto`, `council/refine`, `council/self-moa[:<id>]`, `council/member:<id>`, `council/chairman`).

Registered by core/eval/registry.py (the `inspect_ai` entry point). Under `inspect eval` the
provider builds the configured council itself (settings from the environment and `.env`; the
configured database is opened only while a mode's configuration is read, quick seats' statistics
and reviewer weights, because inspect-ai never closes a model it made, and an open SQLite
connection's thread would keep the process from exiting); `council eval` hands it its `Answerer`.
The conversation becomes the council's question (system messages first, then the last user
message) and its history (the earlier turns); tools are not offered to the council.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any, cast

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from core.errors import ConfigurationError
from core.eval.answering import Answerer, EvalAnswer
from core.eval.configs import ConfigSpec, parse, require_mode
from core.models import ConversationTurn, CouncilConfig, CouncilMode
from core.providers.router import ProviderRouter
from core.settings import Settings, load_settings
from core.shared.redact import Redactor

DEFAULT_CONNECTIONS = 4  # councils in flight per configuration (`council eval --concurrency`)


class CouncilModelAPI(ModelAPI):
    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 - inspect-ai's own signature
        answerer: Answerer | None = None,
        connections: int = DEFAULT_CONNECTIONS,
        settled: dict[str, Any] | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        # `settled`: what a `council eval` run chose for the configuration (Self-MoA's model and k)
        self.spec: ConfigSpec = replace(parse(model_name), **(settled or {}))
        if self.spec.kind == "self-consistency":
            raise ConfigurationError(
                "council/self-consistency is a `council eval` configuration (a vote over samples), not a model"
            )
        if self.spec.kind == "council" and self.spec.mode is not None:
            require_mode(self.spec.mode)
        if self.spec.kind == "self-moa":
            require_mode("self-moa")
        self._answerer = answerer
        self._router: ProviderRouter | None = None  # the router of an answerer this provider made
        self._connections = connections

    def _get_answerer(self) -> Answerer:
        if self._answerer is None:
            settings = load_settings()
            self._router = ProviderRouter(settings)
            self._answerer = Answerer(
                settings, self._router, StandaloneConfigs(settings, self._router), Redactor.from_settings(settings)
            )
        return self._answerer

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        question, history = conversation(input)
        answerer = self._get_answerer()
        answer = await answerer.answer(
            self.spec, question, history, temperature=config.temperature, max_tokens=config.max_tokens
        )
        return output_of(answer, self.model_name)

    def max_connections(self) -> int:
        return self._connections

    def connection_key(self) -> str:
        return f"council/{self.model_name}"

    async def aclose(self) -> None:
        if self._router is not None:
            router, self._router = self._router, None
            self._answerer = None
            await router.aclose()


class StandaloneConfigs:
    """A mode's configuration as the admission builds it, read once per mode with the database
    open only meanwhile."""

    def __init__(self, settings: Settings, router: ProviderRouter) -> None:
        self.settings = settings
        self.router = router
        self._configs: dict[str, CouncilConfig] = {}
        self._lock = asyncio.Lock()

    async def __call__(self, mode: str) -> CouncilConfig:
        async with self._lock:
            if mode not in self._configs:
                from core.admission.admit import Admission
                from core.admission.limits import ConcurrencyGate
                from core.ownership import CouncilOwner
                from core.storage.opening import open_configured_storage

                async with await open_configured_storage(self.settings) as storage:
                    gate = ConcurrencyGate(1, 0)
                    admission = Admission(
                        self.settings, storage, self.router, Redactor.from_settings(self.settings), gate,
                        CouncilOwner(storage),
                    )  # fmt: skip
                    self._configs[mode] = await admission.operator_config(cast(CouncilMode, mode))
            return self._configs[mode]


def conversation(messages: list[ChatMessage]) -> tuple[str, list[ConversationTurn]]:
    """The council's question (system texts, then the last user message) and the turns before it."""
    system = [m.text for m in messages if m.role == "system" and m.text.strip()]
    turns = [m for m in messages if m.role in ("user", "assistant")]
    last_user = max((i for i, m in enumerate(turns) if m.role == "user"), default=None)
    question = turns[last_user].text if last_user is not None else ""
    history = [
        ConversationTurn(role="user" if m.role == "user" else "assistant", content=m.text)
        for m in (turns[:last_user] if last_user is not None else turns)
        if m.text.strip()
    ]
    return "\n\n".join([*system, question]).strip(), history


def output_of(answer: EvalAnswer, model: str) -> ModelOutput:
    usage = ModelUsage(
        input_tokens=answer.usage.prompt_tokens,
        output_tokens=answer.usage.completion_tokens,
        total_tokens=answer.tokens,
        total_cost=answer.usage.cost_usd,
    )
    message = ChatMessageAssistant(content=answer.text, model=model, source="generate")
    return ModelOutput(
        model=model,
        choices=[ChatCompletionChoice(message=message, stop_reason="stop" if answer.error is None else "unknown")],
        completion=answer.text,
        usage=usage,
        time=answer.latency_s,
        metadata=answer.metadata(),
    )
