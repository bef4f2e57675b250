"""Stop during a revision round, from Slack's Stop button: the council ends as stopped, the round says
so, and what was answered (the first answers, the revisions that came back) is kept; nothing is
reviewed or synthesized after it. And each member's revision prompt shows the others in an order of
its own (a seeded council, so that the orders it draws are always the same)."""

from __future__ import annotations

import random

from core.engine.council import run_council
from core.models import CouncilFinished, CouncilRequest, CouncilStatus, RevisionFinished
from core.models.voice import ENDED_STOPPED
from tests import test_council, test_slack_adapter
from tests.llm_server import REVISION, Hang, council_member, shown_answers
from tests.test_council import MEMBERS, config, script
from tests.test_slack_adapter import deliveries, section_texts, statuses

env = test_slack_adapter.env  # the fixture
server, router = test_council.server, test_council.router


async def test_stop_during_a_revision_round_keeps_what_was_answered(env, llm):
    llm.models["gamma"].revise = Hang()  # alpha and beta keep their answers at once; gamma never replies
    await env.command("refine: What is six times seven?")
    await env.fake.wait_for(lambda: statuses(env.fake))
    [status] = statuses(env.fake)
    council_id = status.args["blocks"][0]["block_id"].split("-")[2]
    run = env.service.runs.get(council_id)
    assert run is not None
    revised = []
    async for event in run.events():  # a late listener gets the replay: nothing is missed
        if isinstance(event, RevisionFinished):
            revised.append(event.revision.model)
            if len(revised) == 2:
                break
    assert sorted(revised) == ["alpha", "beta"] and len(llm.requests_for(stage=REVISION)) == 3
    await env.action("council_stop", council_id, user="U1", thread_ts=status.args["thread_ts"])
    await env.fake.wait_for(lambda: deliveries(env.fake) == 1, timeout=30)
    await env.settle()
    stored = await env.service.queries.get_result(council_id)
    assert stored.status is CouncilStatus.CANCELLED and stored.request.config.mode == "refine"
    [held] = stored.rounds
    assert held.ended == ENDED_STOPPED
    assert sorted(r.model for r in held.revisions if r.text and r.kept) == ["alpha", "beta"]
    assert sorted(a.model for a in stored.answers if a.ok) == ["alpha", "beta", "gamma"]
    assert not llm.requests_for(stage=2) and not llm.requests_for(stage=3) and stored.synthesis is None
    last = [c for c in env.fake.calls_to("chat.update") if c.args["ts"] == status.response["ts"]][-1]
    assert "stopped" in section_texts(last.args["blocks"])


async def revision_orders(server, router, seed: int) -> dict[str, list[str]]:
    """Member -> the members whose answers its revision prompt showed, in the order shown."""
    server.requests.clear()
    request = CouncilRequest(question="Capital of France?", config=config(mode="refine", rounds=1))
    events = [e async for e in run_council(request, router, rng=random.Random(seed))]
    assert isinstance(events[-1], CouncilFinished) and events[-1].result.rounds
    by_text = {f"Answer {i} of four, by seat {i}.": m for i, m in enumerate(MEMBERS, 1)}
    return {
        call.model: [by_text[text] for text in shown_answers(call.user).values()]
        for call in server.requests_for(stage=REVISION)
    }


async def test_each_member_s_revision_prompt_shows_the_others_in_an_order_of_its_own(server, router):
    script(server, {m: council_member(f"Answer {i} of four, by seat {i}.") for i, m in enumerate(MEMBERS, 1)})
    orders = await revision_orders(server, router, seed=7)
    assert sorted(orders) == sorted(MEMBERS)
    assert all(sorted(shown) == sorted(m for m in MEMBERS if m != member) for member, shown in orders.items())
    # Not one order for the council (seat order, or one shuffle for all): two members were shown
    # some pair of the others in opposite orders.
    before = {(a, b) for shown in orders.values() for i, a in enumerate(shown) for b in shown[i + 1 :]}
    assert any((b, a) in before for a, b in before), orders
    assert await revision_orders(server, router, seed=7) == orders  # seeded: the same draw again
