"""Stage 3: the chairman's streamed synthesis; when it fails (or is degenerate), the best-ranked
member stands in, and failing that, the best-ranked answer is given as written.

During a fallback, ChairmanToken.model changes to the stand-in member: renderers restart the
streamed text there."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import TYPE_CHECKING

from core import prompts
from core.engine import notices
from core.engine.runner import Calls
from core.engine.state import CouncilState
from core.engine.stream import Stream, StreamEnded, Streamer
from core.models import ChairmanFinished, ChatMessage, CouncilEvent, ErrorInfo, StageStarted, Synthesis
from core.providers.base import ProviderError

if TYPE_CHECKING:
    from core.providers.router import ProviderRouter

# A synthesizer whose context window is this small (tokens; local models) gets the brief prompt:
# the best answers only. Tiny models lose the thread in the full one and echo its markers.
BRIEF_PROMPT_CONTEXT = 8192
BRIEF_PROMPT_ANSWERS = 2


def run_synthesis(state: CouncilState, calls: Calls, router: ProviderRouter) -> AsyncGenerator[CouncilEvent, None]:
    # The synthesizer's generator is the stage itself: each generator level that tokens pass
    # through costs CPU with hundreds of concurrent councils (bench/bench_engine.py).
    return _Synthesizer(state, Streamer(state, calls, router), router).run()


class _Synthesizer:
    def __init__(self, state: CouncilState, streamer: Streamer, router: ProviderRouter) -> None:
        self.state = state
        self.streamer = streamer
        self.router = router

    async def run(self) -> AsyncGenerator[CouncilEvent, None]:
        """Sets state.synthesis (None when a stopped chairman had written nothing usable)."""
        chairman = self.state.config.chairman
        stream = self._start(chairman, fallback=False)
        yield self.state.event(StageStarted, stage=3)
        ended: StreamEnded | None = None
        async with aclosing(self.streamer.relay(stream)) as events:
            async for item in events:
                if isinstance(item, StreamEnded):
                    ended = item
                else:
                    yield item
        assert ended is not None  # relay always ends with one
        if ended.outcome.completion is not None:
            self.state.synthesis = self._synthesis(chairman, ended, by_chairman=True)
        elif self.state.control.stopped:
            self.state.synthesis = self._partial(chairman, ended)
        else:
            assert ended.outcome.error is not None
            async with aclosing(self._fallback(ended.outcome.error)) as events:
                async for event in events:
                    yield event
        if self.state.synthesis is not None:
            yield self.state.event(ChairmanFinished, synthesis=self.state.synthesis)

    def _start(self, model: str, *, fallback: bool) -> Stream:
        """Start `model`'s synthesis; the relay loops stay inline in the callers (one generator
        level less per token, which bench/bench_engine.py shows at 200 councils)."""
        return self.streamer.start(model, self._prompt(model, fallback=fallback), unquote=self._small_context(model))

    async def _fallback(self, chair_error: ErrorInfo) -> AsyncGenerator[CouncilEvent, None]:
        state = self.state
        chairman = state.config.chairman
        cause = f"The chairman ({chairman}) failed: {chair_error.short()}"
        ranked = self._ranked_members()
        stand_in = next((m for m in ranked if m != chairman), None)
        if stand_in is not None:
            ended: StreamEnded | None = None
            stream = self._start(stand_in, fallback=True)
            async with aclosing(self.streamer.relay(stream)) as events:
                async for item in events:
                    if isinstance(item, StreamEnded):
                        ended = item
                    else:
                        yield item
            assert ended is not None
            if ended.outcome.completion is not None:
                note = f"{cause}; {stand_in} synthesized this answer instead."
                state.synthesis = self._synthesis(stand_in, ended, by_chairman=False, note=note)
                return
            if state.control.stopped:
                state.synthesis = self._partial(stand_in, ended)
                return
            assert ended.outcome.error is not None
            cause += f"; the stand-in {stand_in} also failed: {ended.outcome.error.short()}"
        best = ranked[0]
        note = (
            f"{cause}; this is the top-ranked member answer "
            f"(Response {state.answers[best].label}, by {best}) as written, without synthesis."
        )
        state.synthesis = Synthesis(model=best, text=state.answers[best].text or "", by_chairman=False, note=note)

    def _ranked_members(self) -> list[str]:
        """Answered members, best first: by the aggregate if any ballot counted, else member order."""
        answered = list(self.state.label_to_model.values())
        aggregate = self.state.aggregate
        if aggregate and any(e.average_rank is not None for e in aggregate.entries):
            return [e.model for e in aggregate.entries if e.model in answered]
        return answered

    def _prompt(self, model: str, *, fallback: bool) -> list[ChatMessage]:
        state = self.state
        texts = state.labelled_texts()
        if self._small_context(model):
            best = [state.answers[m].label for m in self._ranked_members()[:BRIEF_PROMPT_ANSWERS]]
            return prompts.brief_chairman_messages(
                state.request.question,
                {label: texts[label] for label in best if label},
                history=state.request.history,
                member_ids=state.all_ids(),
                fallback=fallback,
            )
        return prompts.chairman_messages(
            state.request.question,
            texts,
            [r.text for r in state.reviews.values() if r.text],
            state.aggregate.entries if state.aggregate else None,
            state.chair_fence,
            history=state.request.history,
            member_ids=state.all_ids(),
            fallback=fallback,
        )

    def _small_context(self, model: str) -> bool:
        context_window = getattr(self.router, "context_window", None)  # fakes may not say
        try:
            window = context_window(model) if context_window is not None else None
        except ProviderError:
            return False  # the call itself will report the cause
        return window is not None and window <= BRIEF_PROMPT_CONTEXT

    def _synthesis(self, model: str, ended: StreamEnded, *, by_chairman: bool, note: str | None = None) -> Synthesis:
        completion = ended.outcome.completion
        assert completion is not None
        return Synthesis(
            model=model,
            text=ended.text,  # what the tokens showed, without markers
            by_chairman=by_chairman,
            note=note,
            latency_s=ended.outcome.latency_s,
            usage=completion.usage,
        )

    def _partial(self, model: str, ended: StreamEnded) -> Synthesis | None:
        if not ended.text.strip() or ended.unusable:
            return None
        return Synthesis(
            model=model,
            text=ended.text,
            by_chairman=model == self.state.config.chairman,
            note=notices.INCOMPLETE_SYNTHESIS,
            latency_s=ended.outcome.latency_s,
        )
