"""Stage 1: every seat answers the question, in parallel (a failed model hands its seat to the
next of its chain); labels are assigned at the end."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable
from contextlib import aclosing
from typing import TYPE_CHECKING

from core.engine import prompts
from core.engine.batch import Outcome, SeatCall
from core.engine.runner import Calls
from core.engine.state import LABELS, CouncilState
from core.models import (
    Completion,
    CouncilEvent,
    ErrorInfo,
    ErrorKind,
    MemberAnswer,
    MemberFailed,
    MemberFinished,
    MemberStarted,
    MemberWaiting,
    SchedulePlanned,
    StageStarted,
    seats,
)
from core.models.deliberation import seat_of_key
from core.shared import markers

if TYPE_CHECKING:
    from core.providers.router import ProviderRouter


async def run_answers(state: CouncilState, calls: Calls, router: ProviderRouter) -> AsyncGenerator[CouncilEvent, None]:
    config = state.config
    pending = state.pending_seats()  # all seats; after auto mode's escalation, the ones not yet asked
    # A resumed council: these members are not asked again.
    stored = {seat: a for seat, a in state.stored_answers().items() if seat in pending}
    # Calls start before the events go out: a consumer that renders slowly must not delay them.
    asked = [seat for seat in pending if seat not in stored]
    plan = memory_plan(router, asked)
    batch = calls.launch_seats(
        # In the plan's order: the largest queue first for their endpoint's memory (scheduling.py).
        {seat: member_call(state, router, seat) for seat in [s for b in plan for s in b] or asked},
        "answer",
        config.member_timeout_s,
    )
    yield state.event(StageStarted, stage=1)
    if len(plan) > 1:
        yield state.event(SchedulePlanned, stage=1, batches=plan)
    # Members of a later memory batch wait for the first batch's memory: followers see them waiting,
    # then started once they are asked (the stage's wait tells when: outcome.began).
    later = {seat for b in plan[1:] for seat in b}
    batch.announce = later.copy()
    for member in pending:
        if member in later:
            yield state.event(MemberWaiting, model=member)
        else:
            yield state.event(MemberStarted, model=member)
    for answer in stored.values():
        _restore_answer(state, calls, answer)
        if answer.ok:
            yield state.event(MemberFinished, answer=answer.model_copy())
        else:
            yield state.event(MemberFailed, answer=answer.model_copy())
    policy = state.policy()
    async with aclosing(calls.gather(batch, policy, "answer", "members")) as outcomes:
        async for outcome in outcomes:
            if outcome.began:
                yield state.event(MemberStarted, model=outcome.key)
                continue
            answer = _record_answer(state, outcome)
            if answer.ok:
                yield state.event(MemberFinished, answer=answer.model_copy())
            else:
                yield state.event(MemberFailed, answer=answer.model_copy())
    _assign_labels(state)


def member_call(state: CouncilState, router: ProviderRouter, key: str) -> SeatCall:
    """A member's stage-1 call: its seat's chain, its lens in its own prompt and options."""
    messages = prompts.stage1_messages(
        state.request.question, state.request.history, state.persona(key), origin=state.request.origin
    )
    options = state.member_options(key)

    def ask(model: str) -> Awaitable[Completion]:
        return router.complete(model, state.material.apply(messages, model, state.material_fence), options)

    return SeatCall(state.chain(key), ask)


def memory_plan(router: ProviderRouter, asked: list[str]) -> list[list[str]]:
    """The seats in the batches their primaries' memory allows (every seat once; [] without a budget)."""
    primaries = {seats.primary(seat_of_key(seat)): seat for seat in asked}
    if len(primaries) != len(asked) or not getattr(router, "scheduling", None) or not router.scheduling.enabled:
        return []
    batches = [[primaries[m] for m in batch] for batch in router.memory_plan(list(primaries))]
    planned = {seat for batch in batches for seat in batch}
    rest = [seat for seat in asked if seat not in planned]  # on endpoints without a budget
    return [*batches, rest] if batches and rest else batches


def _record_answer(state: CouncilState, outcome: Outcome) -> MemberAnswer:
    answer = MemberAnswer(
        model=outcome.model or state.chain(outcome.key)[0],
        seat=outcome.key,
        attempts=outcome.attempts,
        error=outcome.error,
        latency_s=outcome.latency_s,
    )
    if outcome.completion is not None:
        answer.usage = outcome.completion.usage
        text = markers.strip_markers(outcome.completion.text, state.nonces())  # it is shown as written
        if text.strip():
            answer.text = text
        else:
            answer.error = ErrorInfo(kind=ErrorKind.BAD_RESPONSE, message="the answer held only internal markers")
    if outcome.skipped:
        state.skipped.add(outcome.key)
    state.answers[outcome.key] = answer
    state.asked.add(outcome.key)
    return answer


def _restore_answer(state: CouncilState, calls: Calls, answer: MemberAnswer) -> None:
    seat = answer.seat or answer.model
    if state.was_skipped(answer.error):
        state.skipped.add(seat)
    calls.usage += answer.usage
    state.answers[seat] = answer
    state.asked.add(seat)


def _assign_labels(state: CouncilState) -> None:
    # Labels follow member order (not arrival order), so they are stable for a config. Auto mode
    # labels its first two answers, and all of them again once it escalates.
    state.label_to_model.clear()
    state.label_to_seat.clear()
    answered = [m for m in state.members if state.answers[m].ok]
    for label, member in zip(LABELS, answered):
        state.answers[member].label = label
        state.label_to_model[label] = state.answers[member].model
        state.label_to_seat[label] = member
