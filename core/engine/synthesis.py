"""Stage 3: the chairman's streamed synthesis; when it fails (or is degenerate), the best-ranked
member stands in, and failing that, the best-ranked answer is given as written.

During a fallback, ChairmanToken.model changes to the stand-in member: renderers restart the
streamed text there."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import TYPE_CHECKING

from core import prompts, seats
from core.engine import notices
from core.engine.quick import VerdictScreen, verdict_review
from core.engine.reviews import aggregate_reviews
from core.engine.runner import Calls
from core.engine.state import CouncilState
from core.engine.stream import Stream, StreamEnded, Streamer
from core.models import Attempt, ChairmanFinished, ChatMessage, CouncilEvent, StageStarted, Synthesis
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
        """Sets state.synthesis (None when a stopped chairman had written nothing usable).

        The chairman is a seat: when one of its models fails, the next of its chain writes, in
        an equal share of the time left; when all fail, a member stands in (`_fallback`)."""
        state = self.state
        chain = seats.seat_models(state.config.chairman)
        attempts: list[Attempt] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + state.config.member_timeout_s
        for index, chairman in enumerate(chain):
            stream = self._start(chairman, fallback=False, timeout_s=(deadline - loop.time()) / (len(chain) - index))
            if index == 0:
                yield state.event(StageStarted, stage=3)
            ended: StreamEnded | None = None
            async with aclosing(self.streamer.relay(stream)) as events:
                async for item in events:
                    if isinstance(item, StreamEnded):
                        ended = item
                    else:
                        yield item
            assert ended is not None  # relay always ends with one
            if ended.outcome.completion is not None:
                note = seats.fallback_note(chairman, attempts)
                state.synthesis = self._synthesis(
                    chairman, ended, by_chairman=True, note=f"The chairman {note}." if note else None
                )
                self._keep_verdict(chairman, stream)
                break
            if state.control.stopped:
                state.synthesis = self._partial(chairman, ended)
                break
            assert ended.outcome.error is not None
            attempts.append(Attempt(model=chairman, error=ended.outcome.error))
        else:
            async with aclosing(self._fallback(attempts)) as events:
                async for event in events:
                    yield event
        if state.synthesis is not None:
            state.synthesis.attempts = attempts
            if not state.control.stopped:  # complete: a stop from now on only drops late reviews
                state.answered_at = time.perf_counter()
            yield state.event(ChairmanFinished, synthesis=state.synthesis)

    def _start(self, model: str, *, fallback: bool, timeout_s: float | None = None) -> Stream:
        """Start `model`'s synthesis; the relay loops stay inline in the callers (one generator
        level less per token, which bench/bench_engine.py shows at 200 councils)."""
        verdict = list(self.state.label_to_model) if self._quick and len(self.state.label_to_model) == 2 else None
        return self.streamer.start(
            model,
            self._prompt(model, fallback=fallback),
            unquote=self._small_context(model),
            verdict=verdict,
            timeout_s=timeout_s,
        )

    @property
    def _quick(self) -> bool:
        return self.state.config.mode == "quick"

    def _keep_verdict(self, model: str, stream: Stream) -> None:
        """Quick mode: the chairman's comparison becomes the council's one ballot."""
        if not isinstance(stream.screen, VerdictScreen):
            return
        review = verdict_review(model, stream.screen, self.state.label_to_model)
        if review is not None:
            self.state.reviews[model] = review
            self.state.aggregate = aggregate_reviews(self.state)

    async def _fallback(self, attempts: list[Attempt]) -> AsyncGenerator[CouncilEvent, None]:
        state = self.state
        chain = [a.model for a in attempts]
        if len(attempts) == 1:
            failed = attempts[0].error.short()
        else:
            failed = "; ".join(f"{a.model}: {seats.short_cause(a.error.short())}" for a in attempts)
        cause = f"The chairman ({', '.join(chain)}) failed: {failed}"
        ranked = self._ranked_members()
        stand_in = next((m for m in ranked if m not in chain), None)
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
                self._keep_verdict(stand_in, stream)
                return
            if state.control.stopped:
                state.synthesis = self._partial(stand_in, ended)
                return
            assert ended.outcome.error is not None
            cause += f"; the stand-in {stand_in} also failed: {ended.outcome.error.short()}"
        best = ranked[0]
        answer = state.answer_of(best)
        note = (
            f"{cause}; this is the top-ranked member answer "
            f"(Response {answer.label}, by {best}) as written, without synthesis."
        )
        state.synthesis = Synthesis(model=best, text=answer.text or "", by_chairman=False, note=note)

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
            best = [state.answer_of(m).label for m in self._ranked_members()[:BRIEF_PROMPT_ANSWERS]]
            return prompts.brief_chairman_messages(
                state.request.question,
                {label: texts[label] for label in best if label},
                history=state.request.history,
                member_ids=state.all_ids(),
                fallback=fallback,
            )
        if self._quick and not fallback and len(texts) == 2:
            return prompts.quick_chairman_messages(
                state.request.question,
                texts,
                state.chair_fence,
                history=state.request.history,
                member_ids=state.all_ids(),
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
            by_chairman=model in seats.seat_models(self.state.config.chairman),
            note=notices.INCOMPLETE_SYNTHESIS,
            latency_s=ended.outcome.latency_s,
        )
