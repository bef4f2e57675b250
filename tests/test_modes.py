"""The engine's stage runner end to end over loopback HTTP: fallback seats, quick mode, reviewer
sampling, adaptive grace and the early decision of stage 2 with its late reviews."""

from __future__ import annotations

from collections import Counter

import pytest

from core.admission.admit import quick_seats
from core.engine.council import CouncilControl
from core.models import (
    ChairmanFinished,
    ChairmanToken,
    CouncilRequest,
    CouncilStatus,
    ErrorKind,
    ModelStats,
    ParseStatus,
    ReviewFinished,
    StageStarted,
)
from core.models.seats import clean_seat, fallback_note, seat_models
from tests import test_council
from tests.factories import run_council_to_end
from tests.llm_server import (
    ByStage,
    Fail,
    Hang,
    Reply,
    WaitFor,
    council_member,
    flaky,
    ranking_review,
)
from tests.test_council import ANSWERS, CHAIR, M1, M2, M3, M4, MEMBERS, SYNTHESIS, config, members, prefer, script

BACKUP = "backup/model-test"
SPARE_CHAIR = "chair/spare-test"


server, router = test_council.server, test_council.router  # the fixtures


def with_backup(**overrides):
    scripts = members(**overrides)
    scripts[BACKUP] = council_member("Backup: Paris.", prefer("CADB"), synthesis="Synthesis by backup.")
    return scripts


# --------------------------------------------------------------------------- seats


def test_seat_specs_are_written_one_way():
    assert seat_models(" a | b |a|| c ") == ["a", "b", "c"]
    assert clean_seat(" a | b ") == "a|b" and clean_seat(" | ") == ""


@pytest.mark.parametrize(
    ("primary", "kind", "calls"),
    [
        (Fail(401, "invalid api key"), ErrorKind.AUTH, 1),  # hard error: no retry
        (Fail(404, "no such model", code="model_not_found"), ErrorKind.MODEL_NOT_FOUND, 1),
        (Fail(500, "down"), ErrorKind.UNAVAILABLE, 2),  # 5xx: retried (LLM_MAX_RETRIES=1) first
    ],
)
async def test_a_failed_primary_hands_its_seat_to_the_fallback(server, router, primary, kind, calls):
    script(server, with_backup(**{M2: primary}))
    seat = f"{M2}|{BACKUP}"
    _, result = await run_council_to_end(
        router, CouncilRequest(question="q", config=config(members=[M1, seat, M3, M4]))
    )
    answer = result.answers[1]
    assert (answer.model, answer.seat, answer.text) == (BACKUP, seat, "Backup: Paris.")
    assert [a.model for a in answer.attempts] == [M2] and answer.attempts[0].error.kind is kind
    assert len(server.requests_for(M2, stage=1)) == calls
    assert result.status is CouncilStatus.OK and result.label_to_model["B"] == BACKUP
    note = fallback_note(answer.model, answer.attempts)
    assert note is not None and note.startswith(f"answered by the fallback {BACKUP} ({M2} failed: {kind.value}")
    assert f"Seat {seat}: {note}" in result.notices
    # The fallback model reviews in its seat's place.
    assert {r.reviewer for r in result.reviews} == {M1, BACKUP, M3, M4}


async def test_a_transient_error_is_retried_before_any_fallback(server, router):
    regular = members()[M2]
    flaky_answer = flaky(1, Fail(429, "slow down", retry_after="0"), Reply(ANSWERS[M2]))
    script(server, with_backup(**{M2: ByStage(flaky_answer, regular.stage2, regular.stage3)}))
    _, result = await run_council_to_end(
        router, CouncilRequest(question="q", config=config(members=[M1, f"{M2}|{BACKUP}", M3, M4]))
    )
    answer = result.answers[1]
    assert answer.model == M2 and answer.attempts == [] and not server.requests_for(BACKUP, stage=1)


async def test_a_hung_primary_leaves_its_fallback_a_share_of_the_deadline(server, router):
    script(server, with_backup(**{M2: Hang()}))
    _, result = await run_council_to_end(
        router,
        CouncilRequest(question="q", config=config(members=[f"{M2}|{BACKUP}", M1], member_timeout_s=4.0)),
    )
    answer = result.answers[0]
    assert answer.model == BACKUP and answer.attempts[0].error.kind is ErrorKind.TIMEOUT
    assert result.timings["stage1_s"] < 4.0  # half the deadline for the primary, then the fallback


async def test_a_chairman_chain_records_its_attempts(server, router):
    spare = council_member("spare", synthesis=SYNTHESIS)
    script(server, members(**{CHAIR: Fail(401, "invalid api key"), SPARE_CHAIR: spare}))
    events, result = await run_council_to_end(
        router, CouncilRequest(question="q", config=config(chairman=f"{CHAIR}|{SPARE_CHAIR}"))
    )
    synthesis = result.synthesis
    assert synthesis.model == SPARE_CHAIR and synthesis.by_chairman and synthesis.text == SYNTHESIS
    assert [a.model for a in synthesis.attempts] == [CHAIR] and synthesis.attempts[0].error.kind is ErrorKind.AUTH
    assert synthesis.note == f"The chairman {fallback_note(SPARE_CHAIR, synthesis.attempts)}."
    assert {e.model for e in events if isinstance(e, ChairmanToken)} == {SPARE_CHAIR}


# --------------------------------------------------------------------------- quick mode


async def test_quick_mode_is_three_calls_and_keeps_the_comparison_as_a_ballot(server, router):
    verdict = Reply(lambda call: f"PREFERRED: Response B\n{SYNTHESIS}", token_delay_s=0.002)
    script(server, members(**{CHAIR: ByStage(Reply("-"), Reply("-"), verdict)}))
    events, result = await run_council_to_end(
        router, CouncilRequest(question="q", config=config(members=[M1, M2], mode="quick"))
    )
    assert len(server.requests) == 3  # two answers and the chairman
    assert [e.stage for e in events if isinstance(e, StageStarted)] == [1, 3]
    assert "PREFERRED" not in "".join(e.delta for e in events if isinstance(e, ChairmanToken))
    assert result.synthesis.text == SYNTHESIS and result.status is CouncilStatus.OK
    (ballot,) = result.reviews
    assert (ballot.reviewer, ballot.ballot_models, ballot.parse_status) == (CHAIR, [M2, M1], ParseStatus.COMPLETE)
    assert result.aggregate.entries[0].model == M2 and result.aggregate.ballots_used == 1
    prompt = server.requests_for(CHAIR, stage=3)[0].user
    assert "PREFERRED: Response A" in prompt and "PREFERRED: Response B" in prompt


async def test_quick_mode_without_a_verdict_still_answers(server, router):
    script(server, members())
    _, result = await run_council_to_end(
        router, CouncilRequest(question="q", config=config(members=[M1, M2], mode="quick"))
    )
    assert result.synthesis.text == SYNTHESIS and result.reviews == [] and result.status is CouncilStatus.OK


def test_quick_seats_are_the_fastest_reliable_ones():
    stats = {
        "a": ModelStats(model="a", councils=10, failures=0, average_latency_s=9.0),
        "b": ModelStats(model="b", councils=10, failures=5, average_latency_s=0.5),  # fast but unreliable
        "c": ModelStats(model="c", councils=10, failures=1, average_latency_s=2.0),
    }
    assert quick_seats(["a", "b", "c|x", "d"], stats) == ["c|x", "a"]
    assert quick_seats(["a", "b", "d"], {}) == ["a", "b"]
    assert quick_seats(["d", "e", "c"], stats) == ["c", "d"]


# --------------------------------------------------------------------------- reviewer sampling


async def test_max_reviewers_balances_the_reviews(server, router):
    seats = [f"m{i}/test" for i in range(6)]
    script(server, {m: council_member(f"Answer by {m}.") for m in seats} | {CHAIR: members()[CHAIR]})
    _, result = await run_council_to_end(
        router, CouncilRequest(question="q", config=config(members=seats, max_reviewers=2))
    )
    assert len(server.requests_for(stage=2)) == 6
    assert all(len(r.shown_labels) == 2 for r in result.reviews)
    reviewed = Counter(label for r in result.reviews for label in r.shown_labels)
    assert set(reviewed.values()) == {2} and len(reviewed) == 6
    own = {m: label for label, m in result.label_to_model.items()}
    assert all(own[r.reviewer] not in r.shown_labels for r in result.reviews)
    assert all(e.rankings_count == 2 for e in (result.late_aggregate or result.aggregate).entries)


# --------------------------------------------------------------------------- adaptive grace


async def test_stragglers_get_an_adaptive_grace(server, router):
    fast = {m: council_member(ANSWERS[m], latency_s=0.1) for m in MEMBERS}
    script(server, fast | {"hung/test": Hang(), CHAIR: members()[CHAIR]})
    cfg = config(members=[*MEMBERS, "hung/test"], grace_s=20.0, grace_min_s=1.0, grace_factor=2.0)
    _, result = await run_council_to_end(router, CouncilRequest(question="q", config=cfg))
    hung = result.answers[-1]
    assert hung.error.kind is ErrorKind.TIMEOUT and "1 s grace period" in hung.error.message
    assert result.timings["stage1_s"] < 5.0  # max(1 s, 2 x 0.1 s) after the quorum, not 20 s


# --------------------------------------------------------------------------- early decision


def is_chairman_call(call) -> bool:
    return call.model == CHAIR and call.stage == 3


async def test_the_chairman_starts_once_first_place_is_decided(server, router):
    # Everyone prefers D; M4 (D's author) reviews last: its reply waits for the chairman's call,
    # which can only come once the three other ballots decided that D is first.
    order = prefer("DCAB")
    late = council_member(ANSWERS[M4], order)
    late.stage2 = WaitFor(is_chairman_call, Reply(ranking_review(order)))
    script(server, members(order, **{M4: late}))
    events, result = await run_council_to_end(router, CouncilRequest(question="q", config=config()))
    finished = next(i for i, e in enumerate(events) if isinstance(e, ChairmanFinished))
    on_time = {e.review.reviewer for e in events[:finished] if isinstance(e, ReviewFinished)}
    assert M4 not in on_time  # told after the answer
    assert [e.review.reviewer for e in events[finished:] if isinstance(e, ReviewFinished)] == [M4]
    review = next(r for r in result.reviews if r.reviewer == M4)
    assert review.ballot_models == [M3, M1, M2] and review.late  # stored with the council
    # The ranking shown with the answer is the chairman's (3 ballots); with M4's, late_aggregate.
    assert result.aggregate.ballots_used == 3 and result.late_aggregate is not None
    assert result.late_aggregate.ballots_late == 1 and result.late_aggregate.ballots_used == 4
    assert result.aggregate.entries[0].model == M4 and result.status is CouncilStatus.OK
    assert [r.reviewer for r in result.reviews] == MEMBERS  # member order, late ones included
    assert "late_reviews_s" in result.timings  # the answer's total_s was taken before they were awaited


async def test_every_review_counts_whether_on_time_or_late(server, router):
    script(server, members(prefer("CADB")))
    events, result = await run_council_to_end(router, CouncilRequest(question="q", config=config()))
    every = result.late_aggregate or result.aggregate  # with the late ones, when any came
    assert every.ballots_used == 4
    assert len([e for e in events if isinstance(e, ReviewFinished)]) == 4


async def test_a_stop_after_the_answer_only_drops_the_late_reviews(server, router):
    order = prefer("DCAB")
    hung = council_member(ANSWERS[M4], order)
    hung.stage2 = Hang()
    script(server, members(order, **{M4: hung}))

    def stop_once_answered(event, control):
        if isinstance(event, ChairmanFinished):
            control.stop()

    _, result = await run_council_to_end(
        router, CouncilRequest(question="q", config=config()), CouncilControl(), stop_once_answered
    )
    assert result.status is CouncilStatus.OK and result.synthesis.text == SYNTHESIS
    late = next(r for r in result.reviews if r.reviewer == M4)
    assert late.error.kind is ErrorKind.CANCELLED and result.late_aggregate is None
    assert result.timings["late_reviews_s"] < 5
