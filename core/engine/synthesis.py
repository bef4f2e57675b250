"""Stage 3: the chairman's streamed synthesis; when it fails (or is degenerate), the best-ranked
member stands in, and failing that, the best-ranked answer is given as written.

During a fallback, ChairmanToken.model changes to the stand-in member: renderers restart the
streamed text there.

Who writes in turn and what the Synthesis notes is core/engine/succession.py; the prompts are
core/engine/chair_prompt.py; this module streams each turn's tokens."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import TYPE_CHECKING

from core.engine.chair_prompt import BRIEF_PROMPT_ANSWERS, BRIEF_PROMPT_CONTEXT, ChairPrompt
from core.engine.quick import VerdictScreen, verdict_review
from core.engine.reviews import aggregate_reviews
from core.engine.runner import Calls
from core.engine.state import CouncilState
from core.engine.stream import Stream, StreamEnded, Streamer
from core.engine.succession import Succession, Turn, partial_synthesis
from core.models import ChairmanFinished, CouncilEvent, StageStarted

if TYPE_CHECKING:
    from core.providers.router import ProviderRouter

__all__ = ["BRIEF_PROMPT_ANSWERS", "BRIEF_PROMPT_CONTEXT", "run_synthesis"]


def run_synthesis(state: CouncilState, calls: Calls, router: ProviderRouter) -> AsyncGenerator[CouncilEvent, None]:
    # The synthesizer's generator is the stage itself: each generator level that tokens pass
    # through costs CPU with hundreds of concurrent councils (bench/bench_engine.py).
    return _Synthesizer(state, Streamer(state, calls, router), ChairPrompt(state, router)).run()


class _Synthesizer:
    def __init__(self, state: CouncilState, streamer: Streamer, prompt: ChairPrompt) -> None:
        self.state = state
        self.streamer = streamer
        self.prompt = prompt

    async def run(self) -> AsyncGenerator[CouncilEvent, None]:
        """Sets state.synthesis (None when a stopped chairman had written nothing usable).

        Each turn of the succession (the chairman's chain, then a stand-in) streams until one
        writes the synthesis or the council is stopped; when none does, the best answer stands."""
        state = self.state
        succession = Succession(state)
        for index, turn in enumerate(succession.turns()):
            stream = self._start(turn)
            if index == 0:  # the chain's first model has started
                yield state.event(StageStarted, stage=3)
            ended: StreamEnded | None = None
            # The relay loop stays inline, here only: one generator level less per token, which
            # bench/bench_engine.py shows at 200 councils.
            async with aclosing(self.streamer.relay(stream)) as events:
                async for item in events:
                    if isinstance(item, StreamEnded):
                        ended = item
                    else:
                        yield item
            assert ended is not None  # relay always ends with one
            if self._concluded(turn, stream, ended, succession):
                break
        else:
            state.synthesis = succession.as_written()
        if state.synthesis is not None:
            state.synthesis.attempts = succession.attempts
            if not state.control.stopped:  # complete: a stop from now on only drops late reviews
                state.answered_at = time.perf_counter()
            yield state.event(ChairmanFinished, synthesis=state.synthesis)

    def _start(self, turn: Turn) -> Stream:
        """Start `turn`'s synthesis (its stream's pump runs before any event announces it)."""
        quick_verdict = self.prompt.quick and len(self.state.label_to_model) == 2
        return self.streamer.start(
            turn.model,
            self.prompt.messages(turn.model, fallback=not turn.by_chairman),
            unquote=self.prompt.small_context(turn.model),
            verdict=list(self.state.label_to_model) if quick_verdict else None,
            timeout_s=turn.timeout_s,
        )

    def _concluded(self, turn: Turn, stream: Stream, ended: StreamEnded, succession: Succession) -> bool:
        """Whether `turn` ends the stage: it wrote the synthesis, or the council was stopped."""
        state = self.state
        state.chair_section = stream.sections.section if stream.sections is not None else None
        if ended.outcome.completion is not None:
            state.synthesis = succession.written(turn, ended)
            self._keep_verdict(turn.model, stream)
            return True
        if state.control.stopped:
            state.synthesis = partial_synthesis(state, turn.model, ended)
            return True
        assert ended.outcome.error is not None
        succession.failed(turn, ended.outcome.error)
        return False

    def _keep_verdict(self, model: str, stream: Stream) -> None:
        """Quick mode: the chairman's comparison becomes the council's one ballot."""
        if not isinstance(stream.screen, VerdictScreen):
            return
        review = verdict_review(model, stream.screen, self.state.label_to_model)
        if review is not None:
            self.state.reviews[model] = review
            self.state.aggregate = aggregate_reviews(self.state)
