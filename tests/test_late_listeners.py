"""Listeners that join a council late (issue 36): what a process keeps of a finished council is its
result, the last few of them (core/durable/runs.py: KEEP_FINISHED), and the chairman's streamed pieces
are merged once the synthesis is complete; a listener still gets the whole council, from memory
while it runs and from the database after. A real CouncilService against the scripted server."""

from __future__ import annotations

import asyncio

from core.durable import runs
from core.models import ChairmanToken, CouncilEvent, CouncilFinished, Origin
from tests.conftest import MEMBERS
from tests.llm_server import council_member

ORIGIN = Origin(user_id="U1", channel_id="C1")
SYNTHESIS = "The council agrees: " + " ".join(f"word{i}" for i in range(40)) + "."


def _chairman_text(events: list[CouncilEvent]) -> str:
    return "".join(event.delta for event in events if isinstance(event, ChairmanToken))


def _tokens_merged(kinds: list[str]) -> list[str]:
    return [kind for i, kind in enumerate(kinds) if kind != "chairman_token" or kinds[i - 1 : i] != [kind]]


async def test_a_late_listener_after_eviction_gets_the_complete_story(service, monkeypatch):
    monkeypatch.setattr(runs, "KEEP_FINISHED", 2)
    run = await service.start_council("What is six times seven?", ORIGIN)
    live = [event async for event in run.events()]  # joined at the start: every event as it came
    for i in range(2):  # two more councils finish: the first one's run is let go
        await (await service.start_council(f"And {i}?", ORIGIN)).wait()
    assert service.runs.get(run.council_id) is None

    late = [event async for event in (await service.runs.follow(run.council_id)).events()]

    stored = await service.queries.get_result(run.council_id)
    assert isinstance(late[-1], CouncilFinished) and late[-1].result == stored
    assert _chairman_text(late) == _chairman_text(live) == stored.synthesis.text
    # The same story in the same order; reviews that came after the synthesis began are told
    # after the answer to both.
    kinds = [event.kind for event in late if event.kind != "review_finished"]
    assert kinds == _tokens_merged([event.kind for event in live if event.kind != "review_finished"])
    live_reviews = [event.review for event in live if event.kind == "review_finished"]
    late_reviews = [event.review for event in late if event.kind == "review_finished"]
    by_reviewer = lambda reviews: sorted(reviews, key=lambda review: review.reviewer)  # noqa: E731
    assert by_reviewer(late_reviews) == by_reviewer(live_reviews) == by_reviewer(stored.reviews)
    answers = [event.answer for event in late if event.kind in ("member_finished", "member_failed")]
    assert sorted(a.model for a in answers) == sorted(MEMBERS) and [a.text for a in answers] == [
        a.text for a in stored.answers
    ]


async def test_a_listener_reading_mid_synthesis_gets_the_rest_once_the_pieces_are_merged(service, llm):
    for name in MEMBERS:
        llm.script(name, council_member(f"{name} says 42.", synthesis=SYNTHESIS, token_delay_s=0.01))
    run = await service.start_council("Slowly, please?", ORIGIN)
    reader = run.numbered()
    had: list[tuple[int, CouncilEvent]] = []
    while sum(isinstance(event, ChairmanToken) for _, event in had) < 3:  # part of the synthesis
        had.append(await anext(reader))
    result = await run.wait()  # meanwhile the synthesis completes: its pieces are merged
    resumed_after = had[-1][0]
    # A second listener resumes after the last number the first one saw (SSE's Last-Event-ID).
    resumed = [event async for _, event in run.numbered(resumed_after)]
    had += [item async for item in reader]

    numbers = [number for number, _ in had]
    assert numbers == sorted(set(numbers)), "numbers only grow, none twice"
    assert _chairman_text([event for _, event in had]) == SYNTHESIS == result.synthesis.text
    told_before = _chairman_text([event for number, event in had if number <= resumed_after])
    assert told_before + _chairman_text(resumed) == SYNTHESIS
    assert isinstance(had[-1][1], CouncilFinished) and isinstance(resumed[-1], CouncilFinished)


async def test_a_finished_run_nobody_reads_keeps_its_result_not_its_events(service, llm):
    for name in MEMBERS:
        llm.script(name, council_member(f"{name} says 42.", synthesis=SYNTHESIS))
    run = await service.start_council("Quickly?", ORIGIN)
    result = await run.wait()
    await asyncio.sleep(0)  # the council's task moves it to the finished runs
    assert service.runs.get(run.council_id) is run
    told = [item async for item in run.numbered()]
    # Its story from the result: numbered from 1, the synthesis as one piece.
    assert [number for number, _ in told] == list(range(1, len(told) + 1))
    assert [event.delta for _, event in told if isinstance(event, ChairmanToken)] == [result.synthesis.text]
    # A listener resuming after any number gets the end, which holds the whole council.
    assert [event for _, event in [item async for item in run.numbered(3)]] == [told[-1][1]]
