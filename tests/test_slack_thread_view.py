"""What people see in a Slack thread, streamed and not: what went wrong comes before the answer
and the title does not claim success, the council's link is under a streamed answer, the result
is the answer and one plain line (the figures are behind the buttons), and a quick council says
it was quick and offers no stage it did not have."""

from __future__ import annotations

import json
import re

import pytest

from tests import test_slack_adapter
from tests.llm_server import ByStage, Fail, Reply, council_member
from tests.test_slack_adapter import results, section_texts, streamed

env = test_slack_adapter.env  # the fixture
BOTH = [{}, {"streaming": True}]
IDS = ["chat.update", "streamed"]


async def answer_of(env) -> tuple[str, list[dict], str | None]:
    """(the answer's text as shown, the blocks under it, the streamed title) once it is delivered."""
    fake = env.fake
    if fake.streaming:
        await fake.wait_for(lambda: streamed(fake))
        await env.settle()
        [(start, stop, message)] = streamed(fake)
        titles = [
            c["title"]
            for call in fake.calls_to("chat.startStream", "chat.appendStream", "chat.stopStream")
            if call.ok and (call.args.get("ts") or call.response.get("ts")) == start.response["ts"]
            for c in call.args.get("chunks") or []
            if c["type"] == "plan_update"
        ]
        return message["text"], stop.args["blocks"], titles[-1]
    await fake.wait_for(lambda: results(fake))
    await env.settle()
    [answer] = results(fake)
    blocks = answer.args["blocks"]
    return section_texts(blocks), blocks, None


def chairman_fails(llm) -> None:
    good = council_member("alpha says 42.", synthesis="Final answer by alpha: 42.")
    llm.script("alpha", ByStage(good.stage1, good.stage2, Fail(500, "the chairman broke")))


@pytest.mark.parametrize("env", BOTH, indirect=True, ids=IDS)
async def test_a_stand_in_is_named_before_the_answer_and_the_title_claims_no_success(env, llm):
    chairman_fails(llm)
    await env.command("What is six times seven?")
    text, _blocks, title = await answer_of(env)
    answer_at = text.index("Final answer by")
    before = text[:answer_at]
    assert "chairman" in before and "alpha" in before and "failed" in before, text
    if title is not None:
        assert "failed" in title.lower() and not title.startswith("The council answered"), title


@pytest.mark.parametrize("env", BOTH, indirect=True, ids=IDS)
async def test_a_failed_member_is_said_before_the_answer(env, llm):
    llm.script("gamma", Fail(503, "overloaded"))
    await env.command("What is six times seven?")
    text, _blocks, title = await answer_of(env)
    before = text[: text.index("Final answer by")]
    assert "gamma" in before, text
    if title is not None:
        assert not title.startswith("The council answered"), title


@pytest.mark.parametrize(
    "env", [{"streaming": True, "COUNCIL_PUBLIC_URL": "https://council.example.com"}], indirect=True
)
async def test_the_streamed_answer_links_the_councils_page(env, llm):
    await env.command("What is six times seven?")
    _text, blocks, _title = await answer_of(env)
    council_id = blocks[0]["block_id"].split("-")[2]
    assert f"<https://council.example.com/c/{council_id}|open in the browser>" in json.dumps(blocks)


@pytest.mark.parametrize("env", BOTH, indirect=True, ids=IDS)
async def test_the_result_is_the_answer_and_one_plain_line(env, llm):
    await env.command("What is six times seven?")
    text, blocks, _title = await answer_of(env)
    shown = text + json.dumps(blocks, ensure_ascii=False)
    for clutter in ("agreement W=", "votes)", "█", "░", "Ranking: 1."):
        assert clutter not in shown, clutter
    council_id = blocks[0]["block_id"].split("-")[2]
    contexts = [e["text"] for b in blocks if b["type"] == "context" for e in b["elements"]]
    assert sum(c.count(council_id) for c in contexts) == 1
    assert any("3 of 3 members answered" in c for c in contexts), contexts
    buttons = [e["text"]["text"] for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert {"Answers", "Reviews", "Ranking"} <= set(buttons)
    if env.fake.streaming:  # the plan above the answer: a line per stage, not one per member
        [(start, _stop, _message)] = streamed(env.fake)
        tasks = {
            c["id"]
            for call in env.fake.calls_to("chat.startStream", "chat.appendStream", "chat.stopStream")
            if call.ok and (call.args.get("ts") or call.response.get("ts")) == start.response["ts"]
            for c in call.args.get("chunks") or []
            if c["type"] == "task_update"
        }
        assert len(tasks) <= 3, tasks


@pytest.mark.parametrize("env", BOTH, indirect=True, ids=IDS)
async def test_a_quick_council_says_so_and_every_stage_it_offers_opens(env, llm):
    llm.script("alpha", ByStage(Reply("alpha says 42."), Reply("x"), Reply("PREFERRED: Response A\nIt is 42.")))
    await env.command("quick: What is six times seven?")
    text, blocks, title = await answer_of(env)
    shown = text + json.dumps(blocks, ensure_ascii=False) + (title or "")
    assert re.search(r"\bquick\b", shown, re.IGNORECASE), shown
    stages = [
        e
        for b in blocks
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"].startswith("council_stage_")
    ]
    for stage in stages:  # each stage it offers opens something: none is an empty "no reviews"
        await env.action(stage["action_id"], stage["value"])
        await env.settle()
        opened = json.dumps(env.fake.calls_to("views.open")[-1].args["view"], ensure_ascii=False)
        assert "No reviews" not in opened and "no review" not in opened.lower(), opened


@pytest.mark.parametrize("env", BOTH, indirect=True, ids=IDS)
async def test_auto_modes_escalation_is_said_before_the_answer(env, llm):
    await env.command("auto: What is six times seven?")  # "alpha says: …" and "beta says: …" differ
    text, _blocks, _title = await answer_of(env)
    answer_at = text.index("Final answer by")
    assert "scalated" in text[:answer_at], text
