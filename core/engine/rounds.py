"""Refine mode's revision rounds, between stage 1 and the reviews (`CouncilConfig.rounds` of them at most).

In each round every member that answered is shown the others' latest answers (core/engine/revision_prompt.py)
and writes a revised answer or keeps its own. Revisions run like stage 1: in parallel, the seat's chain
from the model that answered, its lens, the quorum and grace, the memory plan; a member that fails or is
cut short keeps its answer. Each revision is measured (core/engine/revision_moves.py: held or moved,
toward whom) and the rounds end early when no member moved or when the answers converged. The first
answers stay in `state.answers` (the result's stage 1); the latest are `state.latest`, which reviewers
and the chairman read. A resumed council replays the revisions its journal kept (RevisionFinished each)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable
from contextlib import aclosing
from typing import TYPE_CHECKING

from core.engine import revision_moves
from core.engine.answers import memory_plan
from core.engine.batch import Outcome, SeatCall
from core.engine.revision_prompt import read_reply, revision_messages
from core.engine.runner import Calls
from core.engine.state import CouncilState
from core.models import (
    Completion,
    CouncilEvent,
    ErrorInfo,
    ErrorKind,
    Revision,
    RevisionFinished,
    RevisionRound,
    RoundFinished,
    RoundStarted,
)
from core.models.voice import (
    ENDED_CONVERGED,
    ENDED_LAST,
    ENDED_NO_MOVE,
    ENDED_STOPPED,
    ENDED_SYNTHESIZE,
)
from core.shared import markers

if TYPE_CHECKING:
    from core.providers.router import ProviderRouter


async def run_rounds(state: CouncilState, calls: Calls, router: ProviderRouter) -> AsyncGenerator[CouncilEvent, None]:
    for number in range(1, state.config.rounds + 1):
        seats = list(state.label_to_seat.values())  # the members that answered, in label order
        if len(seats) < 2 or state.control.interrupted:
            break
        revision_round = RevisionRound(number=number)
        stored = {r.seat: r for r in state.checkpoint.revisions if r.round == number and r.seat in seats}
        asked = [seat for seat in seats if seat not in stored]
        plan = memory_plan(router, asked)
        order = [s for batch in plan for s in batch] or asked
        batch = calls.launch_seats(
            {seat: _revision_call(state, router, seat, seats) for seat in order},
            "revision",
            state.config.member_timeout_s,
        )
        yield state.event(RoundStarted, number=number, members=seats)
        revisions: dict[str, Revision] = {}
        for seat, revision in stored.items():  # a resumed council: not asked again
            calls.usage += revision.usage
            revisions[seat] = revision
            yield state.event(RevisionFinished, revision=revision)
        async with aclosing(calls.gather(batch, state.policy(), "revision", "revisions")) as outcomes:
            async for outcome in outcomes:
                revision = _revision(state, number, outcome, seats)
                revisions[outcome.key] = revision
                yield state.event(RevisionFinished, revision=revision)
        revision_round.revisions = [revisions[seat] for seat in seats if seat in revisions]
        for revision in revision_round.revisions:
            if revision.text:
                state.latest[revision.seat] = revision.text
        revision_round.converged = revision_moves.convergence([state.latest_text(seat) for seat in seats])
        revision_round.ended = _ended(state, revision_round)
        state.rounds.append(revision_round)
        yield state.event(RoundFinished, round=revision_round.model_copy())
        if revision_round.ended is not None:
            break


def _ended(state: CouncilState, revision_round: RevisionRound) -> str | None:
    if state.control.stopped:
        return ENDED_STOPPED
    if state.control.synthesize_requested:
        return ENDED_SYNTHESIZE
    if not any(r.moved for r in revision_round.revisions):
        return ENDED_NO_MOVE
    converged = revision_round.converged
    if converged is not None and converged >= revision_moves.CONVERGED:
        return ENDED_CONVERGED
    if revision_round.number >= state.config.rounds:
        return ENDED_LAST
    return None


def _revision_call(state: CouncilState, router: ProviderRouter, seat: str, seats: list[str]) -> SeatCall:
    """The seat's revision: its own latest answer, the others' in a fresh order, its lens; asked of the
    model that answered it first (then the rest of its chain)."""
    others = [state.latest_text(other) for other in seats if other != seat]
    state.rng.shuffle(others)
    messages = revision_messages(
        state.request.question,
        state.latest_text(seat),
        others,
        state.revision_fence,
        history=state.request.history,
        persona=state.persona(seat),
        member_ids=state.all_ids(),
        origin=state.request.origin,
    )
    options = state.member_options(seat)
    chain = state.chain(seat)
    answered = state.answers[seat].model
    chain = chain[chain.index(answered) :] if answered in chain else chain

    def ask(model: str) -> Awaitable[Completion]:
        return router.complete(model, state.material.apply(messages, model, state.material_fence), options)

    return SeatCall(chain, ask)


def _revision(state: CouncilState, number: int, outcome: Outcome, seats: list[str]) -> Revision:
    seat = outcome.key
    previous = state.latest_text(seat)
    revision = Revision(
        round=number,
        seat=seat,
        model=outcome.model or state.answers[seat].model,
        text=previous,
        error=outcome.error,
        latency_s=outcome.latency_s,
    )
    if outcome.completion is None:
        if outcome.skipped and revision.error is None:
            revision.error = ErrorInfo(kind=ErrorKind.CANCELLED, message="cut short")
        return revision
    revision.usage = outcome.completion.usage
    reply = read_reply(markers.strip_markers(outcome.completion.text, state.nonces()))
    revision.reason = reply.reason
    if reply.kept or not reply.text.strip():
        revision.kept = reply.kept
        return revision
    others = [(state.answers[o].model, state.latest_text(o)) for o in seats if o != seat]
    move = revision_moves.measure_move(reply.text, previous, others)
    revision.text = reply.text
    revision.moved, revision.toward, revision.new_share = move.moved, move.toward, round(move.new_share, 4)
    return revision
