"""A chat front end's background tasks (Open WebUI's chat titles, tags and follow-up suggestions)
answered by one fast model instead of a council: each would otherwise cost a whole council, and
a title needs no review.

The task is checked like a question (input limits, the asker's rate limit and budget, without
using them up) and answered by COUNCIL_API_TASK_MODEL, else by the council member with the lowest
stored stage-1 latency (the first member while nothing is stored)."""

from __future__ import annotations

from core.admission.admit import Admission
from core.errors import ModelFailed
from core.models import ChatMessage, Completion, Origin
from core.models.seats import primary
from core.providers.base import CallOptions, ProviderError
from core.providers.router import ProviderRouter
from core.settings import Settings
from core.shared.redact import Redactor
from core.storage import Storage


class FrontEndTasks:
    def __init__(
        self, settings: Settings, storage: Storage, router: ProviderRouter, admission: Admission, redact: Redactor
    ):
        self.settings, self.storage, self.router = settings, storage, router
        self.admission, self.redact = admission, redact

    async def answer(self, prompt: str, origin: Origin, *, max_tokens: int | None = None) -> Completion:
        """One model's answer to `prompt` (at most `max_tokens`, else COUNCIL_MAX_ANSWER_TOKENS);
        raises what admission raises, or ModelFailed."""
        prompt = await self.admission.check(prompt, origin)
        model = await self.model()
        config = self.admission.config_for(None)
        options = CallOptions(timeout_s=config.member_timeout_s, max_tokens=max_tokens or config.max_answer_tokens)
        try:
            completion = await self.router.complete(model, [ChatMessage(role="user", content=prompt)], options)
        except ProviderError as exc:
            raise ModelFailed(
                f"The task model {model} failed: {self.redact(exc.message)}", exc.info().kind.value
            ) from None
        return completion  # its text was redacted where it entered: the router

    async def model(self) -> str:
        if self.settings.api.task_model:
            return self.settings.api.task_model
        members = [primary(seat) for seat in self.admission.config_for(None).members]
        stats = await self.storage.stats.model_stats()
        timed = [(stats[m].average_latency_s, i) for i, m in enumerate(members) if m in stats]
        known = [(latency, i) for latency, i in timed if latency is not None]
        return members[min(known)[1]] if known else members[0]
