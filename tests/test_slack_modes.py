"""Issues 12 and 23 on Slack: the `quick:` and `auto:` keywords, `/council-admin mode`, and a seat's
fallback shown."""

from __future__ import annotations

import json

import pytest

from core.models import Origin, Platform
from tests import test_slack_adapter
from tests.llm_server import Fail, council_member
from tests.test_slack_adapter import (
    all_text,
    ephemeral_texts,
    posted,
    results,
    section_texts,
    stage1_requests,
    streamed,
)

env = test_slack_adapter.env  # the fixture
ORIGIN = Origin(platform=Platform.SLACK, workspace_id="T1", channel_id="C1")


async def test_quick_keyword_runs_a_quick_council(env, llm):
    await env.command("quick: What is six times seven?")
    await env.fake.wait_for(lambda: results(env.fake))
    await env.settle()
    [answer] = results(env.fake)
    council_id = answer.args["blocks"][0]["block_id"].split("-")[2]
    stored = await env.service.queries.get_result(council_id)
    assert stored.request.config.mode == "quick" and stored.request.question == "What is six times seven?"
    assert stage1_requests(llm) == 2 and not llm.requests_for(stage=2)


async def test_admin_mode_sets_the_channel_default_and_show_says_it(env, llm):
    await env.command("mode quick", user="UADMIN", command="/council-admin")
    await env.command("mode fast", user="UADMIN", command="/council-admin")
    await env.settle()
    assert (await env.service.channels.channel_settings(ORIGIN)).mode == "quick"
    assert (await env.service.channels.effective_config(ORIGIN)).mode == "quick"
    await env.command("show", user="U2", command="/council-admin")
    await env.settle()
    texts = ephemeral_texts(env.fake)
    assert any("*Mode:* quick" in t for t in texts)
    assert any("Unknown mode `fast`" in t for t in texts)
    await env.command("standard: And now in full?")
    await env.fake.wait_for(lambda: results(env.fake))
    await env.settle()
    assert stage1_requests(llm) == 3 and llm.requests_for(stage=2)  # the keyword beats the channel's mode


async def test_a_seats_fallback_is_shown_with_the_answer(env, llm):
    llm.script("broken", Fail(401, "invalid api key"))
    await env.command("members broken|gamma, alpha, beta", user="UADMIN", command="/council-admin")
    await env.settle()
    assert (await env.service.channels.effective_config(ORIGIN)).members == ["broken|gamma", "alpha", "beta"]
    await env.command("Who answers for broken?")
    await env.fake.wait_for(lambda: results(env.fake))
    await env.settle()
    [answer] = results(env.fake)
    assert "answered by the fallback gamma (broken failed: auth 401" in section_texts(answer.args["blocks"])


async def test_auto_keyword_stops_at_two_answers_that_agree(env, llm):
    for name in ("alpha", "beta"):
        llm.script(name, council_member("42."))
    await env.command("auto: What is six times seven?")
    await env.fake.wait_for(lambda: results(env.fake))
    await env.settle()
    [answer] = results(env.fake)
    council_id = answer.args["blocks"][0]["block_id"].split("-")[2]
    stored = await env.service.queries.get_result(council_id)
    assert stored.request.config.mode == "auto" and stored.request.question == "What is six times seven?"
    assert stored.escalated is False and stored.synthesis.text == "42."
    assert len(llm.requests) == 2  # the two answers, nothing else
    shown = all_text(answer)
    assert "the first two answers were the same" in shown and ":warning:" not in shown


async def test_auto_mode_channel_default_escalates_and_says_so(env, llm):
    await env.command("mode auto", user="UADMIN", command="/council-admin")
    await env.settle()
    assert (await env.service.channels.effective_config(ORIGIN)).mode == "auto"
    await env.command("What is six times seven?")  # "alpha says: …" and "beta says: …" differ
    await env.fake.wait_for(lambda: results(env.fake))
    await env.settle()
    [answer] = results(env.fake)
    assert "escalated: the first two answers disagreed" in all_text(answer)
    assert stage1_requests(llm) == 3 and len(llm.requests_for(stage=2)) == 3


@pytest.mark.parametrize("env", [{"streaming": True}], indirect=True)
async def test_a_streamed_auto_council_shows_the_check_and_the_answer_as_written(env, llm):
    for name in ("alpha", "beta"):
        llm.script(name, council_member("42."))
    await env.command("auto: What is six times seven?")
    await env.fake.wait_for(lambda: streamed(env.fake))
    await env.settle()
    [(_, stop, message)] = streamed(env.fake)
    assert message["text"] == "42." and not message["streaming"]
    tasks = message["tasks"]
    assert tasks["agreement"]["status"] == "complete" and tasks["agreement"]["output"].startswith("Yes")
    assert tasks["chairman"]["output"] == "Not needed: the first two answers were the same"
    assert "the first two answers were the same" in json.dumps(stop.args["blocks"])
    assert len(llm.requests) == 2


async def test_a_question_picks_its_members_and_chairman_among_the_allowed(env, llm):
    # issue 33: `members: a, b; chairman: c` before the question, in a mention and in /council
    await env.event(env.mention("<@UBOT> members: gamma, beta; chairman: gamma What is six times seven?"))
    await env.fake.wait_for(lambda: results(env.fake))
    await env.settle()
    [summary] = await env.service.queries.history(ORIGIN, "channel")
    assert (summary.members, summary.chairman) == (["gamma", "beta"], "gamma")
    stored = await env.service.queries.get_result(summary.council_id)
    assert stored.request.question == "What is six times seven?"
    assert sorted(r.model for r in llm.requests_for(stage=1)) == ["beta", "gamma"]


async def test_a_model_the_channel_does_not_allow_is_refused_naming_the_allowed(env, llm):
    llm.script("delta", council_member("delta says 42."))
    await env.command("members: alpha, delta What is six times seven?")
    await env.settle()
    assert not results(env.fake) and not llm.requests  # nothing posted, nothing asked
    refusal = "`delta` is not allowed here; this channel allows: alpha, beta, gamma."
    assert any(refusal in t for t in ephemeral_texts(env.fake))
    await env.command("allow alpha, delta", user="UADMIN", command="/council-admin")
    await env.settle()
    assert await env.service.channels.allowed(ORIGIN) == ["alpha", "delta"]
    await env.command("members: alpha, delta What is six times seven?")
    await env.fake.wait_for(lambda: results(env.fake))
    await env.settle()
    assert sorted(r.model for r in llm.requests_for(stage=1)) == ["alpha", "delta"]
    await env.command("allow default", user="UADMIN", command="/council-admin")
    await env.settle()
    assert await env.service.channels.allowed(ORIGIN) == ["alpha", "beta", "gamma"]


@pytest.mark.parametrize("env", [{"COUNCIL_UNSURE_BELOW": "101"}], indirect=True)
async def test_an_unsure_answer_says_so_first_and_mentions_the_channel_s_group(env, llm):
    await env.command("unsure <!subteam^S0ONCALL|@oncall>", user="UADMIN", command="/council-admin")
    await env.command("unsure @oncall", user="UADMIN", command="/council-admin")  # not a mention Slack escaped
    await env.settle()
    assert (await env.service.channels.channel_settings(ORIGIN)).unsure_mention == "group:S0ONCALL"
    texts = ephemeral_texts(env.fake)
    assert any("An unsure answer here mentions <!subteam^S0ONCALL>." in t for t in texts)
    assert any("Say `/council-admin unsure @group`" in t for t in texts)
    await env.command("What is six times seven?")
    await env.fake.wait_for(lambda: results(env.fake))
    await env.fake.wait_for(lambda: any("<!subteam^S0ONCALL>" in (c.args.get("text") or "") for c in posted(env.fake)))
    await env.settle()
    [answer] = results(env.fake)
    first = section_texts(answer.args["blocks"]).splitlines()[0]
    assert first.startswith(":grey_question: The council is unsure (consensus ") and "COUNCIL_UNSURE_BELOW 101" in first
    [called] = [c for c in posted(env.fake) if "<!subteam^S0ONCALL>" in (c.args.get("text") or "")]
    assert called.args["text"].startswith("<!subteam^S0ONCALL> The council is unsure")
    assert called.args.get("thread_ts") == answer.args.get("thread_ts")
    await env.command("unsure off", user="UADMIN", command="/council-admin")
    await env.settle()
    assert (await env.service.channels.channel_settings(ORIGIN)).unsure_mention is None


async def test_a_sure_answer_mentions_nobody(env, llm):
    await env.command("unsure <@U2|bob>", user="UADMIN", command="/council-admin")
    await env.command("What is six times seven?")
    await env.fake.wait_for(lambda: results(env.fake))
    await env.settle()
    assert (await env.service.channels.channel_settings(ORIGIN)).unsure_mention == "user:U2"
    assert not any("<@U2>" in all_text(c) for c in posted(env.fake))
    assert "unsure" not in section_texts(results(env.fake)[0].args["blocks"])
