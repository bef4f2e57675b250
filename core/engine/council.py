"""The council engine: three stages as one async event stream.

    run_council(request, router, control) -> AsyncIterator[CouncilEvent]

Event sequence (each MemberStarted is followed by exactly one MemberFinished or MemberFailed):

    CouncilStarted
    StageStarted(1), MemberStarted x n, (MemberFinished | MemberFailed) x n  -- in arrival order
    (RoundStarted, RevisionFinished x n, RoundFinished) x rounds            -- refine mode
    StageStarted(2), ReviewFinished x reviewers                            -- unless skipped
    AggregateReady                                                         -- unless skipped
    StageStarted(3), ChairmanToken x k, ChairmanFinished                   -- when any answer
    ReviewFinished x late (Review.late)                   -- reviews still running when stage 3 began
    CouncilFinished(result)                                                -- always, exactly once

In quick mode (config.mode) stage 2 never runs: the chairman compares the two answers in its
one call, and that comparison is the council's ballot. In auto mode two seats answer first and
their agreement is checked (core/engine/auto.py: AgreementStarted when the chairman judges,
then AgreementChecked); when they agree the council goes on as quick mode does (or their common
short answer stands as written: ChairmanFinished at once, no stage 3), and when they do not it
escalates: StageStarted(1) again with a MemberStarted per remaining seat, then stages 2 and 3.
In refine mode the members revise their answers after reading each other's, for at most
`config.rounds` rounds (core/engine/rounds.py), and the reviews rank the latest answers. In
self-moa mode one seat answers `config.samples` times and the chairman aggregates the samples
(no stage 2). Stage 2 ends early once the pending reviews cannot change the first place; those go on while
the chairman writes, and are told and recorded before CouncilFinished (`timings.total_s` is when the
answer was complete). The result's `aggregate` is the ranking the chairman was given; with the late
reviews it is `late_aggregate`.

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

This module is the driver; the stages, the stage runner and the texts live in core/engine/
(see core/engine/__init__.py, and core/engine/runner.py for the runner's extension points).
"""

from __future__ import annotations

import random
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING

from core.engine.answers import run_answers
from core.engine.auto import run_agreement
from core.engine.control import CouncilControl
from core.engine.fact_check import FactSearch, run_fact_check
from core.engine.result import council_result
from core.engine.reviews import collect_late_reviews, run_reviews
from core.engine.rounds import run_rounds
from core.engine.runner import Calls
from core.engine.state import LABELS, CouncilState
from core.engine.synthesis import BRIEF_PROMPT_ANSWERS, BRIEF_PROMPT_CONTEXT, run_synthesis
from core.models import CouncilCheckpoint, CouncilEvent, CouncilFinished, CouncilRequest, CouncilStarted
from core.telemetry.councils import stage_label
from core.telemetry.tracing import StageTrace

if TYPE_CHECKING:
    from core.providers.router import ProviderRouter

__all__ = ["BRIEF_PROMPT_ANSWERS", "BRIEF_PROMPT_CONTEXT", "LABELS", "CouncilControl", "run_council"]

Stage = Callable[[CouncilState, Calls, "ProviderRouter"], AsyncGenerator[CouncilEvent, None]]
_STAGES: tuple[tuple[str, Stage], ...] = (
    ("stage1_s", run_answers),
    ("agreement_s", run_agreement),  # auto mode
    ("escalation_s", run_answers),  # auto mode, escalated: the remaining seats answer
    ("rounds_s", run_rounds),  # refine mode: revision rounds
    ("stage2_s", run_reviews),
    ("fact_check_s", run_fact_check),  # search on and a dispute: the chairman may check one fact
    ("stage3_s", run_synthesis),
)


async def run_council(
    request: CouncilRequest,
    router: ProviderRouter,
    control: CouncilControl | None = None,
    checkpoint: CouncilCheckpoint | None = None,
    *,
    fact_search: FactSearch | None = None,
    rng: random.Random | None = None,
) -> AsyncGenerator[CouncilEvent, None]:
    """Run one council; yields its events and ends with exactly one CouncilFinished.

    `router` needs only `complete` and `stream` (a ProviderRouter, or a fake in benchmarks).
    Closing the generator or cancelling its consumer cancels every call it started.
    `checkpoint`: what an earlier run of this council completed (resuming after its process
    stopped); those answers and reviews are replayed as events, not asked for again.
    `fact_search`: the web search the chairman may use once on a disputed fact, when the council
    searched before stage 1 (core/engine/fact_check.py).
    `rng`: the source of the label and revision orders; a seeded one repeats a council's orders.
    """
    state = CouncilState.new(request, control or CouncilControl(), checkpoint, fact_search, rng)
    calls = Calls(request.council_id, state.control)
    try:
        yield state.event(CouncilStarted, members=state.members, chairman=state.config.chairman)
        # Stages are driven from here, not from a nested generator: every event passes through
        # each generator level, which is measurable with hundreds of concurrent councils.
        for name, stage in _STAGES:
            if not _should_run(state, name):
                continue
            start = time.perf_counter()
            # Its model calls' tasks run in the stage's context: their spans are the stage's
            # children, their log lines name it. Not attached here, across yields, where it
            # would leak into the consumer's context.
            calls.stage = StageTrace(stage_label(name))
            try:
                async with aclosing(stage(state, calls, router)) as events:
                    async for event in events:
                        yield event
            finally:
                state.timings[name] = round(time.perf_counter() - start, 4)
                calls.stage.end()
        if state.late_reviews is not None:
            async with aclosing(_record_late_reviews(state, calls)) as late:
                async for event in late:
                    yield event
        yield state.event(CouncilFinished, result=council_result(state, calls.usage))
    finally:
        await calls.shutdown()


async def _record_late_reviews(state: CouncilState, calls: Calls) -> AsyncGenerator[CouncilEvent, None]:
    """The answer is complete (and shown); the reviews that no longer decided anything are
    awaited before the result, each told as it ends, so that they are stored with the council.
    (After a stop they are recorded as stopped at once.)"""
    answered = state.answered_at or time.perf_counter()
    if state.answered_at is not None:
        state.timings["total_s"] = round(answered - state.started, 4)
    async with aclosing(collect_late_reviews(state, calls)) as events:
        async for event in events:
            yield event
    state.timings["late_reviews_s"] = round(time.perf_counter() - answered, 4)


def _should_run(state: CouncilState, stage: str) -> bool:
    if stage == "stage1_s":
        return True
    auto = state.config.mode == "auto"
    if stage == "agreement_s":  # also when the first two failed: the others may answer
        return auto and not state.control.stopped
    if stage == "escalation_s":
        return state.escalated and not state.control.stopped and bool(state.pending_seats())
    if not state.label_to_model or state.control.stopped:
        return False
    if stage == "stage3_s":
        return state.synthesis is None  # auto mode: a common short answer may already stand
    if stage == "rounds_s":
        return state.config.mode == "refine" and state.config.rounds > 0 and not state.control.interrupted
    if stage == "stage2_s" and state.config.mode == "self-moa":
        return False  # the samples are aggregated, not ranked
    if stage == "fact_check_s":
        return state.fact_search is not None and state.synthesis is None and not state.control.synthesize_requested
    if stage == "stage2_s" and (state.config.mode == "quick" or (auto and not state.escalated)):
        return False  # the chairman compares the two answers itself
    if stage == "stage2_s" and state.control.synthesize_requested:
        state.stage2_skipped_by_user = True  # synthesize-now arrived during stage 1
        return False
    return True
