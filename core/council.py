"""The council engine: three stages as one async event stream.

    run_council(request, router, control) -> AsyncIterator[CouncilEvent]

Event sequence (each MemberStarted is followed by exactly one MemberFinished or MemberFailed):

    CouncilStarted
    StageStarted(1), MemberStarted x n, (MemberFinished | MemberFailed) x n  -- in arrival order
    StageStarted(2), ReviewFinished x reviewers                            -- unless skipped
    AggregateReady                                                         -- unless skipped
    StageStarted(3), ChairmanToken x k, ChairmanFinished                   -- when any answer
    CouncilFinished(result)                                                -- always, exactly once

Stage 2 is skipped when the user asked to synthesize during stage 1 (and has no reviewers when
no member could review anything); stages 2-3 are skipped when no member answered or the council
was stopped. Answers in MemberFinished carry no label yet: labels (A, B, ... in member order,
over the members that answered) exist once stage 1 is over, in AggregateReady.label_to_model
and the result. During a fallback, ChairmanToken.model changes to the stand-in member: a
renderer should restart the streamed text when it does. ChairmanFinished carries the final text.
Calls cut short by stop()/synthesize_now() end as MemberFailed/ReviewFinished with an error of
kind CANCELLED: skipped by the user, not counted as failures.

Stages 1 and 2 run their calls in parallel with a quorum and grace deadline, so that one slow
model never holds the council beyond `member_timeout_s` (and usually far less).
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING

from core import markers, prompts, ranking
from core.material import CouncilMaterial
from core.models import (
    Aggregate,
    AggregateEntry,
    AggregateReady,
    ChairmanFinished,
    ChairmanToken,
    ChatMessage,
    Completion,
    CouncilEvent,
    CouncilFinished,
    CouncilRequest,
    CouncilResult,
    CouncilStarted,
    CouncilStatus,
    ErrorInfo,
    ErrorKind,
    MemberAnswer,
    MemberFailed,
    MemberFinished,
    MemberStarted,
    ParseStatus,
    Review,
    ReviewFinished,
    StageStarted,
    Synthesis,
    Usage,
)
from core.providers.base import CallOptions, ProviderError, TextDelta
from core.synthesis_check import SynthesisJudge, SynthesisScreen

if TYPE_CHECKING:
    from core.providers.router import ProviderRouter

log = logging.getLogger(__name__)

LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_SHUTDOWN_WAIT_S = 2.0  # how long cleanup waits for cancelled calls to unwind
# A synthesizer whose context window is this small (tokens; local models) gets the brief prompt:
# the best answers only. Tiny models lose the thread in the full one and echo its markers.
BRIEF_PROMPT_CONTEXT = 8192
BRIEF_PROMPT_ANSWERS = 2

Call = Callable[[], Awaitable[Completion]]


class CouncilControl:
    """A handle to steer a running council from outside (a Stop or Synthesize-now button).

    Call its methods from the event loop running the council.
    """

    def __init__(self) -> None:
        self._stopped = False
        self._synthesize = False
        self._listeners: set[Callable[[], None]] = set()

    @property
    def stopped(self) -> bool:
        return self._stopped

    @property
    def synthesize_requested(self) -> bool:
        return self._synthesize

    def stop(self) -> None:
        """Cancel everything; the council ends CANCELLED with whatever has arrived."""
        self._stopped = True
        self._wake()

    def synthesize_now(self) -> None:
        """Stop waiting in stage 1 or 2 and go to the synthesis with what has arrived."""
        self._synthesize = True
        self._wake()

    def _subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener` at every stop()/synthesize_now(); returns the unsubscribe function."""
        self._listeners.add(listener)
        return lambda: self._listeners.discard(listener)

    def _wake(self) -> None:
        for listener in list(self._listeners):
            listener()


class _Wakeup:
    """One future that any source (a finished call, a timer, the control) can resolve.

    Cheaper than asyncio.wait() over many awaitables, which re-registers callbacks on every
    call: with hundreds of councils the per-wake cost is what stretches their critical path.
    A poke while nobody waits is dropped: waiters re-check their conditions before arming.
    """

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._future: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = math.inf

    def poke(self, *_: object) -> None:
        if self._future is not None and not self._future.done():
            self._future.set_result(None)

    def wake_at(self, when: float) -> None:
        """Also wake at loop time `when` (replaces an earlier timer)."""
        if when != self._timer_at:
            self.close()
            self._timer_at = when
            self._timer = self._loop.call_at(when, self.poke)

    async def wait(self) -> None:
        self._future = self._loop.create_future()
        await self._future

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._timer_at = math.inf


@dataclass
class _Outcome:
    """How one parallel call ended."""

    key: str = ""
    completion: Completion | None = None
    error: ErrorInfo | None = None
    latency_s: float | None = None
    skipped: bool = False  # cut short by stop()/synthesize_now(): the user's choice, not a failure


@dataclass
class _Batch:
    """Calls running in parallel: task -> key (member id), and when member_timeout_s expires."""

    tasks: dict[asyncio.Task, str]
    deadline: float


@dataclass
class _StreamState:
    """A streamed synthesis: its pump task and what it has produced so far."""

    model: str
    wakeup: _Wakeup  # poked by each delta, so the reader can forward it
    deadline: float  # loop time at which member_timeout_s expires
    screen: SynthesisScreen  # what of the text may be shown, and whether it can stand
    pump: asyncio.Task | None = None
    started: float = field(default_factory=time.perf_counter)
    deltas: list[str] = field(default_factory=list)
    outcome: _Outcome | None = None  # set when the stream has ended

    def push(self, text: str) -> None:
        self.deltas.append(text)
        self.wakeup.poke()


async def run_council(
    request: CouncilRequest, router: ProviderRouter, control: CouncilControl | None = None
) -> AsyncIterator[CouncilEvent]:
    """Run one council; yields its events and ends with exactly one CouncilFinished.

    `router` needs only `complete` and `stream` (a ProviderRouter, or a fake in benchmarks).
    Closing the generator or cancelling its consumer cancels every call it started.
    """
    council = _Council(request, router, control or CouncilControl())
    try:
        yield council._event(CouncilStarted, members=council.members, chairman=council.config.chairman)
        # Stages are driven from here, not from a nested generator: every event passes through
        # each generator level, which is measurable with hundreds of concurrent councils.
        for name, stage in (
            ("stage1_s", council._stage1),
            ("stage2_s", council._stage2),
            ("stage3_s", council._stage3),
        ):
            if not council._should_run(name):
                continue
            start = time.perf_counter()
            try:
                async with aclosing(stage()) as events:
                    async for event in events:
                        yield event
            finally:
                council.timings[name] = round(time.perf_counter() - start, 4)
        yield council._event(CouncilFinished, result=council._result())
    finally:
        await council.shutdown()


class _Council:
    def __init__(self, request: CouncilRequest, router: ProviderRouter, control: CouncilControl):
        self.request = request
        self.config = request.config
        self.router = router
        self.control = control
        # Duplicates would give one model two labels and two ballots.
        self.members = list(dict.fromkeys(self.config.members))
        self.answers: dict[str, MemberAnswer] = {m: MemberAnswer(model=m) for m in self.members}
        self.label_to_model: dict[str, str] = {}
        self.reviews: dict[str, Review] = {}
        self.aggregate: Aggregate | None = None
        self.synthesis: Synthesis | None = None
        self.skipped: set[str] = set()  # "member" and "review" keys cut short by the user
        self.stage2_skipped_by_user = False
        self.timings: dict[str, float] = {}
        self.usage = Usage()
        self.tasks: set[asyncio.Task] = set()
        self.rng = random.Random(secrets.randbits(64))  # per-reviewer label orders
        self.review_fence = prompts.Fence(prompts.new_nonce())
        self.chair_fence = prompts.Fence(prompts.new_nonce())  # reviewers saw the other nonce
        # Files and sources go to every stage; members write stage 1 seeing only this nonce.
        self.material = CouncilMaterial.from_request(request)
        self.material_fence = prompts.Fence(prompts.new_nonce())
        self._started = time.perf_counter()

    # ------------------------------------------------------------------ driver

    def _should_run(self, stage: str) -> bool:
        if stage == "stage1_s":
            return True
        if not self.label_to_model or self.control.stopped:
            return False
        if stage == "stage2_s" and self.control.synthesize_requested:
            self.stage2_skipped_by_user = True  # synthesize-now arrived during stage 1
            return False
        return True

    async def shutdown(self) -> None:
        """Cancel every call still running (the consumer went away, or a stage was cut short)."""
        pending = [task for task in self.tasks if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=_SHUTDOWN_WAIT_S)

    def _event(self, cls, **fields):
        return cls(council_id=self.request.council_id, **fields)

    # ------------------------------------------------------------------ stage 1

    async def _stage1(self) -> AsyncIterator[CouncilEvent]:
        messages = prompts.stage1_messages(self.request.question, self.request.history)
        options = self._options(self.config.max_answer_tokens)
        # Calls start before the events go out: a consumer that renders slowly must not delay them.
        batch = self._launch(
            {
                m: partial(self.router.complete, m, self.material.apply(messages, m, self.material_fence), options)
                for m in self.members
            },
            "answer",
        )
        yield self._event(StageStarted, stage=1)
        for member in self.members:
            yield self._event(MemberStarted, model=member)
        async with aclosing(self._gather(batch, "answer", "members")) as outcomes:
            async for outcome in outcomes:
                answer = self._record_answer(outcome)
                cls = MemberFinished if answer.ok else MemberFailed
                yield self._event(cls, answer=answer.model_copy())
        self._assign_labels()

    def _record_answer(self, outcome: _Outcome) -> MemberAnswer:
        answer = MemberAnswer(model=outcome.key, error=outcome.error, latency_s=outcome.latency_s)
        if outcome.completion is not None:
            answer.usage = outcome.completion.usage
            text = markers.strip_markers(outcome.completion.text, self._nonces())  # it is shown as written
            if text.strip():
                answer.text = text
            else:
                answer.error = ErrorInfo(kind=ErrorKind.BAD_RESPONSE, message="the answer held only internal markers")
        if outcome.skipped:
            self.skipped.add(outcome.key)
        self.answers[outcome.key] = answer
        return answer

    def _assign_labels(self) -> None:
        # Labels follow member order (not arrival order), so they are stable for a config.
        answered = [m for m in self.members if self.answers[m].ok]
        for label, member in zip(LABELS, answered):
            self.answers[member].label = label
            self.label_to_model[label] = member

    # ------------------------------------------------------------------ stage 2

    async def _stage2(self) -> AsyncIterator[CouncilEvent]:
        plans = self._review_plans()
        if plans:  # none when a lone answer may not be reviewed by its own author
            texts = {label: self.answers[m].text or "" for label, m in self.label_to_model.items()}
            builder = prompts.ReviewPrompts(
                self.request.question,
                texts,
                self.review_fence,
                history=self.request.history,
                member_ids=self._all_ids(),
            )
            options = self._options(None)
            batch = self._launch(
                {
                    r: partial(
                        self.router.complete,
                        r,
                        self.material.apply(builder.messages(shown), r, self.review_fence),
                        replace(options, ranking_labels=tuple(shown)),
                    )
                    for r, shown in plans.items()
                },
                "review",
            )
            yield self._event(StageStarted, stage=2)
            async with aclosing(self._gather(batch, "review", "reviewers")) as outcomes:
                async for outcome in outcomes:
                    review = self._record_review(outcome, plans[outcome.key])
                    yield self._event(ReviewFinished, review=review)  # never mutated afterwards
            self.reviews = {r: self.reviews[r] for r in plans}  # member order, not arrival order
        if self.control.stopped:
            return
        self.aggregate = self._aggregate()
        yield self._event(AggregateReady, aggregate=self.aggregate, label_to_model=dict(self.label_to_model))

    def _review_plans(self) -> dict[str, list[str]]:
        """Reviewer -> labels it is shown, in a fresh random order per reviewer (position bias)."""
        model_to_label = {m: label for label, m in self.label_to_model.items()}
        plans = {}
        for reviewer, own in model_to_label.items():
            shown = [label for label in self.label_to_model if not (self.config.exclude_self_review and label == own)]
            if shown:
                self.rng.shuffle(shown)
                plans[reviewer] = shown
        return plans

    def _record_review(self, outcome: _Outcome, shown: list[str]) -> Review:
        if outcome.skipped:
            self.skipped.add(f"review:{outcome.key}")
        fields: dict = {}
        if outcome.completion is not None:
            parsed = ranking.parse_ranking(outcome.completion.text, shown)
            fields = dict(
                text=markers.strip_markers(outcome.completion.text, self._nonces()),  # shown to users
                usage=outcome.completion.usage,
                ballot_labels=list(parsed.order),
                ballot_models=[self.label_to_model[label] for label in parsed.order],
                parse_status=ParseStatus(parsed.status),
            )
        review = Review(
            reviewer=outcome.key, shown_labels=shown, error=outcome.error, latency_s=outcome.latency_s, **fields
        )
        self.reviews[outcome.key] = review
        return review

    def _aggregate(self) -> Aggregate:
        parsed = self._parsed_reviews()
        scores = ranking.aggregate(
            {r.reviewer: r.ballot_labels for r in parsed},
            self.label_to_model,
            exclude_self=self.config.exclude_self_review,
        )
        model_to_label = {m: label for label, m in self.label_to_model.items()}
        entries = [
            AggregateEntry(
                model=s.candidate,
                label=model_to_label.get(s.candidate),
                position=s.position,
                average_rank=s.average_rank,
                rankings_count=s.rankings_count,
                borda=s.borda,
                condorcet_wins=s.copeland,
                first_place_votes=s.first_place_votes,
            )
            for s in scores
        ]
        agreement = ranking.kendall_w([r.ballot_models for r in parsed], list(self.label_to_model.values()))
        unparsed = sum(1 for r in self.reviews.values() if r.text is not None and r.parse_status is ParseStatus.NONE)
        return Aggregate(
            entries=entries,
            agreement_w=agreement,
            method="mean_rank",
            ballots_used=len(parsed),
            ballots_unparsed=unparsed,
        )

    def _parsed_reviews(self) -> list[Review]:
        return [r for r in self.reviews.values() if r.error is None and r.parse_status is not ParseStatus.NONE]

    # ------------------------------------------------------------------ parallel calls

    def _launch(self, calls: dict[str, Call], noun: str) -> _Batch:
        """Start `calls` in parallel (as tasks, so they run while events are being consumed)."""
        deadline = asyncio.get_running_loop().time() + self.config.member_timeout_s
        return _Batch({self._spawn(self._call(call), f"{noun}:{key}"): key for key, call in calls.items()}, deadline)

    async def _gather(self, batch: _Batch, noun: str, plural: str) -> AsyncIterator[_Outcome]:
        """Yield each outcome of `batch` as it arrives, then one per call cut short.

        Cut short: at `member_timeout_s` after the start, at the end of the grace period that
        starts once a quorum has succeeded, or when the user stops / asks to synthesize now.
        """
        loop = asyncio.get_running_loop()
        tasks, hard_deadline, total = dict(batch.tasks), batch.deadline, len(batch.tasks)
        needed = max(1, math.ceil(self.config.quorum * total))
        succeeded = 0
        grace_until = math.inf
        wakeup = _Wakeup()
        for task in tasks:
            task.add_done_callback(wakeup.poke)
        unsubscribe = self.control._subscribe(wakeup.poke)
        try:
            while tasks and not self._interrupted():
                done = [task for task in tasks if task.done()]
                if not done:
                    deadline = min(hard_deadline, grace_until)
                    if loop.time() >= deadline:
                        break
                    wakeup.wake_at(deadline)
                    await wakeup.wait()
                    continue
                for task in done:
                    outcome = task.result()
                    outcome.key = tasks.pop(task)
                    succeeded += outcome.completion is not None
                    yield outcome
                if succeeded >= needed and grace_until == math.inf:
                    grace_until = loop.time() + self.config.grace_s
            if tasks:
                reason = self._cut_reason(noun, plural, succeeded, total, grace_until <= loop.time())
            for task, key in list(tasks.items()):
                task.cancel()
                del tasks[task]
                yield _Outcome(key=key, error=reason, skipped=reason.kind is ErrorKind.CANCELLED)
        finally:
            unsubscribe()
            wakeup.close()
            for task in tasks:
                task.cancel()

    def _interrupted(self) -> bool:
        return self.control.stopped or self.control.synthesize_requested

    def _cut_reason(self, noun: str, plural: str, succeeded: int, total: int, in_grace: bool) -> ErrorInfo:
        if self.control.stopped:
            return _stopped()
        if self.control.synthesize_requested:
            return ErrorInfo(kind=ErrorKind.CANCELLED, message="skipped: you asked to synthesize now")
        if in_grace:
            return ErrorInfo(
                kind=ErrorKind.TIMEOUT,
                message=(
                    f"no {noun} within the {_secs(self.config.grace_s)} grace period after "
                    f"{succeeded} of {total} {plural} answered"
                ),
            )
        return ErrorInfo(
            kind=ErrorKind.TIMEOUT, message=f"no {noun} within the {_secs(self.config.member_timeout_s)} time limit"
        )

    def _spawn(self, coro, what: str) -> asyncio.Task:
        # Named after the council so that a leak would be easy to attribute (tests check it).
        task = asyncio.create_task(coro, name=f"council-{self.request.council_id}-{what}")
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def _call(self, call: Call) -> _Outcome:
        """One model call as an outcome; never raises (except cancellation)."""
        start = time.perf_counter()
        try:
            completion = await call()
        except ProviderError as exc:
            return _Outcome(error=exc.info(), latency_s=time.perf_counter() - start)
        except Exception as exc:  # a provider bug must cost one member, not the whole council
            log.exception("model call crashed")
            return _Outcome(error=_crash_info(exc), latency_s=time.perf_counter() - start)
        self.usage += completion.usage
        if not completion.text.strip():
            error = ErrorInfo(kind=ErrorKind.BAD_RESPONSE, message="the model returned an empty answer")
            return _Outcome(error=error, latency_s=time.perf_counter() - start)
        return _Outcome(completion=completion, latency_s=time.perf_counter() - start)

    def _options(self, max_tokens: int | None) -> CallOptions:
        return CallOptions(
            timeout_s=self.config.member_timeout_s, temperature=self.config.temperature, max_tokens=max_tokens
        )

    def _all_ids(self) -> list[str]:
        return [*self.members, self.config.chairman]

    def _nonces(self) -> tuple[str, str]:
        return self.review_fence.nonce, self.chair_fence.nonce

    # ------------------------------------------------------------------ stage 3

    async def _stage3(self) -> AsyncIterator[CouncilEvent]:
        chairman = self.config.chairman
        state = self._start_stream(chairman, self._chair_prompt(chairman, fallback=False))
        yield self._event(StageStarted, stage=3)
        async with aclosing(self._relay(state)) as events:
            async for event in events:
                yield event
        outcome = state.outcome
        if outcome.completion is not None:
            self.synthesis = self._synthesis(chairman, state, by_chairman=True)
        elif self.control.stopped:
            self.synthesis = self._partial_synthesis(chairman, outcome, state)
        else:
            async with aclosing(self._fallback(outcome.error)) as events:
                async for event in events:
                    yield event
        if self.synthesis is not None:
            yield self._event(ChairmanFinished, synthesis=self.synthesis)

    async def _fallback(self, chair_error: ErrorInfo) -> AsyncIterator[CouncilEvent]:
        """The chairman failed (or wrote a degenerate synthesis): the best-ranked member stands in;
        failing that, its answer does. The stand-in's tokens carry its model id: renderers restart
        the streamed text there."""
        chairman = self.config.chairman
        cause = f"The chairman ({chairman}) failed: {chair_error.short()}"
        ranked = self._ranked_members()
        stand_in = next((m for m in ranked if m != chairman), None)
        if stand_in is not None:
            state = self._start_stream(stand_in, self._chair_prompt(stand_in, fallback=True))
            async with aclosing(self._relay(state)) as events:
                async for event in events:
                    yield event
            outcome = state.outcome
            if outcome.completion is not None:
                note = f"{cause}; {stand_in} synthesized this answer instead."
                self.synthesis = self._synthesis(stand_in, state, by_chairman=False, note=note)
                return
            if self.control.stopped:
                self.synthesis = self._partial_synthesis(stand_in, outcome, state)
                return
            cause += f"; the stand-in {stand_in} also failed: {outcome.error.short()}"
        best = ranked[0]
        note = (
            f"{cause}; this is the top-ranked member answer "
            f"(Response {self.answers[best].label}, by {best}) as written, without synthesis."
        )
        self.synthesis = Synthesis(model=best, text=self.answers[best].text or "", by_chairman=False, note=note)

    def _ranked_members(self) -> list[str]:
        """Answered members, best first: by the aggregate if any ballot counted, else member order."""
        answered = list(self.label_to_model.values())
        if self.aggregate and any(e.average_rank is not None for e in self.aggregate.entries):
            return [e.model for e in self.aggregate.entries if e.model in answered]
        return answered

    def _chair_prompt(self, model: str, *, fallback: bool) -> list[ChatMessage]:
        texts = {label: self.answers[m].text or "" for label, m in self.label_to_model.items()}
        if self._small_context(model):
            best = [self.answers[m].label for m in self._ranked_members()[:BRIEF_PROMPT_ANSWERS]]
            return prompts.brief_chairman_messages(
                self.request.question,
                {label: texts[label] for label in best if label},
                history=self.request.history,
                member_ids=self._all_ids(),
                fallback=fallback,
            )
        reviews = [r.text for r in self.reviews.values() if r.text]
        return prompts.chairman_messages(
            self.request.question,
            texts,
            reviews,
            self.aggregate.entries if self.aggregate else None,
            self.chair_fence,
            history=self.request.history,
            member_ids=self._all_ids(),
            fallback=fallback,
        )

    def _small_context(self, model: str) -> bool:
        context_window = getattr(self.router, "context_window", None)  # fakes may not say
        try:
            window = context_window(model) if context_window is not None else None
        except ProviderError:
            return False  # the call itself will report the cause
        return window is not None and window <= BRIEF_PROMPT_CONTEXT

    def _start_stream(self, model: str, messages: list[ChatMessage]) -> _StreamState:
        """Start streaming a synthesis in a pump task.

        A separate task reads the model, so that neither our deadline nor anything the provider
        does (timeouts cancel "the current task") can fire inside the consumer's code while the
        event generator is suspended at a yield.
        """
        judge = SynthesisJudge(
            "\n\n".join(message.content for message in messages),
            [answer.text for answer in self.answers.values() if answer.text],
        )
        state = _StreamState(
            model,
            _Wakeup(),
            asyncio.get_running_loop().time() + self.config.member_timeout_s,
            SynthesisScreen(judge, self._nonces(), unquote=self._small_context(model)),
        )
        # After the judge: quoting an attached file or a source is using it, not copying the prompt.
        messages = self.material.apply(messages, model, self.chair_fence)
        state.pump = self._spawn(self._call(partial(self._pump, model, messages, state)), f"synthesis:{model}")
        state.pump.add_done_callback(state.wakeup.poke)
        return state

    async def _relay(self, state: _StreamState) -> AsyncIterator[CouncilEvent]:
        """Forward a stream's deltas as ChairmanToken events; leaves an _Outcome in `state.outcome`.

        Deltas pass through the stream's screen: markers never reach a token, and a synthesis
        found degenerate ends the call at once, as a failure (BAD_RESPONSE) with the reason.
        """
        loop = asyncio.get_running_loop()
        model, pump, deadline, screen = state.model, state.pump, state.deadline, state.screen
        state.wakeup.wake_at(deadline)
        unsubscribe = self.control._subscribe(state.wakeup.poke)
        sent = 0
        outcome: _Outcome | None = None
        try:
            while outcome is None:
                while sent < len(state.deltas) and screen.reason is None:  # forward what arrived
                    sent += 1
                    shown = screen.feed(state.deltas[sent - 1])
                    if shown:
                        yield self._event(ChairmanToken, model=model, delta=shown)
                if screen.reason is not None:
                    outcome = _degenerate(screen.reason)
                elif pump.done():
                    outcome = pump.result()
                    if outcome.completion is not None:
                        shown = screen.feed(outcome.completion.text) if not state.deltas else ""
                        shown += screen.finish()
                        if shown:
                            yield self._event(ChairmanToken, model=model, delta=shown)
                        if screen.reason is not None:
                            outcome = _degenerate(screen.reason, outcome.latency_s)
                elif self.control.stopped:
                    outcome = _Outcome(error=_stopped(), skipped=True)
                elif loop.time() >= deadline:
                    message = f"no answer within the {_secs(self.config.member_timeout_s)} time limit"
                    outcome = _Outcome(error=ErrorInfo(kind=ErrorKind.TIMEOUT, message=message))
                else:
                    await state.wakeup.wait()
        finally:
            unsubscribe()
            state.wakeup.close()
            pump.cancel()
        if outcome.latency_s is None:  # cut short here; the pump measures its own calls
            outcome.latency_s = time.perf_counter() - state.started
        state.outcome = outcome

    async def _pump(self, model: str, messages: list[ChatMessage], state: _StreamState) -> Completion:
        completion = None
        # The provider's own timeout is a backstop; the engine's deadline above is the rule.
        options = self._options(self.config.max_answer_tokens)
        async for item in self.router.stream(model, messages, options):
            if isinstance(item, TextDelta):
                if item.text:
                    state.push(item.text)
            else:
                completion = item
        # Tolerate a provider that ends without its final Completion: the text is what matters.
        return completion or Completion(model=model, text="".join(state.deltas))

    def _synthesis(self, model: str, state: _StreamState, *, by_chairman: bool, note: str | None = None) -> Synthesis:
        outcome = state.outcome
        assert outcome is not None and outcome.completion is not None
        return Synthesis(
            model=model,
            text=state.screen.text,  # what the tokens showed, without markers
            by_chairman=by_chairman,
            note=note,
            latency_s=outcome.latency_s,
            usage=outcome.completion.usage,
        )

    def _partial_synthesis(self, model: str, outcome: _Outcome, state: _StreamState) -> Synthesis | None:
        text = state.screen.text
        if not text.strip() or state.screen.reason is not None:
            return None
        return Synthesis(
            model=model,
            text=text,
            by_chairman=model == self.config.chairman,
            note="The council was stopped while this answer was being written; it is incomplete.",
            latency_s=outcome.latency_s,
        )

    # ------------------------------------------------------------------ result

    def _result(self) -> CouncilResult:
        self.timings["total_s"] = round(time.perf_counter() - self._started, 4)
        status, error = self._status()
        return CouncilResult(
            council_id=self.request.council_id,
            request=self.request,
            status=status,
            answers=[self.answers[m] for m in self.members],
            reviews=list(self.reviews.values()),
            label_to_model=dict(self.label_to_model),
            aggregate=self.aggregate,
            synthesis=self.synthesis,
            notices=self._notices(),
            error=error,
            timings=dict(self.timings),
            usage=self.usage,
        )

    def _status(self) -> tuple[CouncilStatus, ErrorInfo | None]:
        if self.control.stopped:
            return CouncilStatus.CANCELLED, ErrorInfo(kind=ErrorKind.CANCELLED, message="The council was stopped.")
        if not self.label_to_model:
            return CouncilStatus.FAILED, self._no_answer_error()
        degraded = (
            any(not a.ok and a.model not in self.skipped for a in self.answers.values())
            or any(r.error is not None and f"review:{r.reviewer}" not in self.skipped for r in self.reviews.values())
            or any(r.text is not None and r.parse_status is ParseStatus.NONE for r in self.reviews.values())
            or (self.synthesis is not None and not self.synthesis.by_chairman)
        )
        return (CouncilStatus.DEGRADED if degraded else CouncilStatus.OK), None

    def _no_answer_error(self) -> ErrorInfo:
        answers = [self.answers[m] for m in self.members]
        if not answers:
            return ErrorInfo(kind=ErrorKind.CONFIG, message="No council members are configured.")
        causes = _causes(answers)
        kinds = {a.error.kind for a in answers if a.error}
        kind = kinds.pop() if len(kinds) == 1 else ErrorKind.UNKNOWN
        if self.control.synthesize_requested and self.skipped:
            return ErrorInfo(
                kind=kind, message=f"No council member had answered when you asked to synthesize: {causes}"
            )
        if len(answers) == 1:
            return ErrorInfo(kind=kind, message=f"The only council member failed: {causes}")
        return ErrorInfo(kind=kind, message=f"All {len(answers)} council members failed: {causes}")

    def _notices(self) -> list[str]:
        notes = []
        if self.synthesis is not None and self.synthesis.note:
            notes.append(self.synthesis.note)  # a degraded synthesis says so first
        notes += [
            f"{a.model} gave no answer: {a.error.short()}"
            for a in self.answers.values()
            if a.error is not None and a.model not in self.skipped and self.label_to_model
        ]
        notes += self._skipped_notes("answers", [m for m in self.members if m in self.skipped])
        notes += self._review_notes()
        return notes

    def _skipped_notes(self, what: str, models: list[str]) -> list[str]:
        if not models:
            return []
        why = "the council was stopped" if self.control.stopped else "you asked to synthesize now"
        return [f"No {what} from {', '.join(models)}: {why}."]

    def _review_notes(self) -> list[str]:
        notes = []
        for r in self.reviews.values():
            if r.error is not None and f"review:{r.reviewer}" not in self.skipped:
                notes.append(f"The review by {r.reviewer} failed: {r.error.short()}")
            elif r.text is not None and r.parse_status is ParseStatus.NONE:
                notes.append(f"The review by {r.reviewer} contained no ranking that could be read.")
        skipped = [r.reviewer for r in self.reviews.values() if f"review:{r.reviewer}" in self.skipped]
        notes += self._skipped_notes("reviews", skipped)
        if self.stage2_skipped_by_user:
            notes.append("The peer reviews were skipped because you asked to synthesize now.")
        elif self.aggregate is not None and self.aggregate.ballots_used == 0:
            if not self.reviews:
                why = "there was no other answer to review"
            elif len(skipped) == len(self.reviews):
                why = "the reviews were skipped because you asked to synthesize now"
            else:
                why = "no review produced a readable ranking"
            notes.append(f"Ranking unavailable: {why}.")
        return notes


def _causes(answers: list[MemberAnswer]) -> str:
    """'m1: cause; m2: cause', or 'm1, m2: cause' when they failed alike (a bad key, say)."""
    by_cause: dict[str, list[str]] = {}
    for answer in answers:
        by_cause.setdefault(answer.error.short() if answer.error else "no answer", []).append(answer.model)
    return "; ".join(f"{', '.join(models)}: {cause}" for cause, models in by_cause.items())


def _degenerate(reason: str, latency_s: float | None = None) -> _Outcome:
    error = ErrorInfo(kind=ErrorKind.BAD_RESPONSE, message=f"its synthesis was unusable: {reason}")
    return _Outcome(error=error, latency_s=latency_s)


def _stopped() -> ErrorInfo:
    return ErrorInfo(kind=ErrorKind.CANCELLED, message="the council was stopped")


def _crash_info(exc: Exception) -> ErrorInfo:
    return ErrorInfo(kind=ErrorKind.UNKNOWN, message=f"internal error: {type(exc).__name__}: {exc}")


def _secs(value: float) -> str:
    return f"{value:g} s"
