"""One streamed synthesis: `start` runs a pump task that reads the model, `relay` forwards what it wrote.

`relay` yields ChairmanToken events and, last, one `StreamEnded` carrying the call's Outcome.
A separate task reads the model, so that neither our deadline nor anything the provider does
(timeouts cancel "the current task") can fire inside the consumer's code while the event
generator is suspended at a yield. Deltas pass through the stream's SynthesisScreen: markers
never reach a token, and a synthesis found degenerate ends the call at once, as a failure
(BAD_RESPONSE) with the reason.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from core.engine import notices, prompts
from core.engine.batch import Outcome
from core.engine.disagreement import SectionScreen
from core.engine.quick import Screen, VerdictScreen
from core.engine.runner import Calls
from core.engine.state import CouncilState
from core.engine.synthesis_check import SynthesisJudge, SynthesisScreen
from core.engine.waiting import Wakeup
from core.models import ChairmanToken, ChatMessage, Completion
from core.providers.base import TextDelta

if TYPE_CHECKING:
    from core.providers.router import ProviderRouter


@dataclass
class StreamEnded:
    """The last item of `relay`: how the streamed call ended, and the text its tokens showed."""

    outcome: Outcome
    text: str  # without markers
    unusable: bool  # the screen found the synthesis degenerate


@dataclass
class Stream:
    """A streamed synthesis: its pump task and what it has produced so far."""

    model: str
    screen: Screen  # what of the text may be shown, and whether it can stand
    deadline: float  # loop time at which its time (member_timeout_s, or a chain's share) expires
    timeout_s: float = 0.0
    wakeup: Wakeup = field(default_factory=Wakeup)  # set by each delta, so the reader can forward it
    pump: asyncio.Task[Outcome] | None = None
    started: float = field(default_factory=time.perf_counter)
    deltas: list[str] = field(default_factory=list)
    sections: SectionScreen | None = None  # holds the "WHERE THEY DIFFER" section back (inside `screen`)

    def push(self, text: str) -> None:
        self.deltas.append(text)
        self.wakeup.set()


class Streamer:
    """Starts and relays the streamed syntheses of one council."""

    def __init__(self, state: CouncilState, calls: Calls, router: ProviderRouter) -> None:
        self.state = state
        self.calls = calls
        self.router = router

    def start(
        self,
        model: str,
        messages: list[ChatMessage],
        *,
        unquote: bool = False,
        verdict: list[str] | None = None,
        timeout_s: float | None = None,
    ) -> Stream:
        """Start streaming `model`'s synthesis in a pump task (before any event announces it).

        `unquote`: the synthesizer got the brief prompt (see chair_prompt.py), whose quote style a
        small model may copy line by line; the screen shows such text unquoted. `verdict`: quick
        mode's labels; the first line, the comparison, is held back (core/engine/quick.py).
        `timeout_s`: its share of the stage's time (a chairman chain), else member_timeout_s."""
        state = self.state
        answer_format = state.request.answer_format
        messages = state.material.apply(messages, model, state.chair_fence)
        # What the prompt quotes for the synthesis to use is no copying; its instructions are.
        judge = SynthesisJudge(
            "\n\n".join(message.content for message in messages),
            [answer.text for answer in state.answers.values() if answer.text],
            [state.request.question, *(turn.content for turn in state.request.history), *state.material.texts()],
            structured=answer_format is not None,
        )
        deadline = asyncio.get_running_loop().time() + (timeout_s or state.config.member_timeout_s)
        sections = SectionScreen(SynthesisScreen(judge, state.nonces(), unquote=unquote))
        screen: Screen = VerdictScreen(sections, verdict) if verdict is not None else sections
        stream = Stream(model, screen, deadline, timeout_s or state.config.member_timeout_s, sections=sections)
        # After the judge: the asker's answer format is not the prompt's text to echo.
        messages = prompts.with_answer_format(messages, answer_format)
        stream.pump = self.calls.spawn(self.calls.outcome(partial(self._pump, stream, messages)), f"synthesis:{model}")
        stream.pump.add_done_callback(stream.wakeup.set)
        return stream

    async def relay(self, stream: Stream) -> AsyncGenerator[ChairmanToken | StreamEnded, None]:
        """Forward the stream's text as ChairmanToken events, then one StreamEnded."""
        state, model, pump = self.state, stream.model, stream.pump
        assert pump is not None  # set by start()
        screen = stream.screen
        unsubscribe = state.control.subscribe(stream.wakeup.set)
        sent = 0
        outcome: Outcome | None = None
        try:
            while outcome is None:
                while sent < len(stream.deltas) and screen.reason is None:  # forward what arrived
                    sent += 1
                    shown = screen.feed(stream.deltas[sent - 1])
                    if shown:
                        yield state.event(ChairmanToken, model=model, delta=shown)
                if pump.done() and screen.reason is None:
                    outcome, shown = _finished(stream, pump.result())
                    if shown:
                        yield state.event(ChairmanToken, model=model, delta=shown)
                else:
                    outcome = self._cut_short(stream)
                    if outcome is None:
                        await stream.wakeup.wait(stream.deadline)
        finally:
            unsubscribe()
            pump.cancel()
        if outcome.latency_s is None:  # cut short here; the pump measures its own calls
            outcome.latency_s = time.perf_counter() - stream.started
        yield StreamEnded(outcome, screen.text, screen.reason is not None)

    def _cut_short(self, stream: Stream) -> Outcome | None:
        """Why the relay stops before the pump ended: a degenerate text, a stop, or the deadline."""
        if stream.screen.reason is not None:
            return Outcome(error=notices.unusable_synthesis(stream.screen.reason))
        if self.state.control.stopped:
            return Outcome(error=notices.stopped(), skipped=True)
        if asyncio.get_running_loop().time() >= stream.deadline:
            return Outcome(error=notices.timed_out(round(stream.timeout_s, 1)))
        return None

    async def _pump(self, stream: Stream, messages: list[ChatMessage]) -> Completion:
        completion = None
        # The provider's own timeout is a backstop; the engine's deadline above is the rule.
        options = self.state.options(self.state.config.max_answer_tokens)
        async for item in self.router.stream(stream.model, messages, options):
            if isinstance(item, TextDelta):
                if item.text:
                    stream.push(item.text)
            else:
                completion = item
        # Tolerate a provider that ends without its final Completion: the text is what matters.
        return completion or Completion(model=stream.model, text="".join(stream.deltas))


def _finished(stream: Stream, outcome: Outcome) -> tuple[Outcome, str]:
    """The pump's outcome once its last text went through the screen, and that text to show.
    A provider that streamed nothing gives its whole text here; the screen may still reject it."""
    if outcome.completion is None:
        return outcome, ""
    screen = stream.screen
    shown = screen.feed(outcome.completion.text) if not stream.deltas else ""
    shown += screen.finish()
    if screen.reason is not None:
        outcome = Outcome(error=notices.unusable_synthesis(screen.reason), latency_s=outcome.latency_s)
    return outcome, shown
