"""The message shortcut "Ask the council about this message", end to end: Slack's message_action
payload, the modal quoting the message, the view submission, and the answer in that message's
thread with the message as conversation and its file read."""

# ruff: noqa: F811  (the `env` fixture is imported from the adapter tests and named as a parameter)
from __future__ import annotations

import json
import time

from tests.slack_fake import encode_form
from tests.test_slack_adapter import env, ephemeral_texts  # noqa: F401 (fixture)
from tests.test_slack_agent import submit_view


async def message_action(env, message: dict, *, user: str = "U1", channel: str = "C1") -> int:
    """The shortcut's payload as Slack sends it (type message_action)."""
    payload = {
        "type": "message_action",
        "token": "legacy",
        "action_ts": str(time.time()),
        "team": {"id": "T1", "domain": "test"},
        "user": {"id": user, "username": user.lower(), "team_id": "T1"},
        "channel": {"id": channel, "name": "general"},
        "callback_id": "council_ask_message",
        "trigger_id": env.next_id("trigger."),
        "message_ts": message["ts"],
        "message": message,
        "response_url": env.fake.response_url(env.next_id("sc")),
    }
    status, _ = await env.post(encode_form({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
    return status


def thread_answers(fake, channel: str, thread_ts: str) -> list:
    return [
        c
        for c in fake.calls_to("chat.postMessage")
        if c.ok
        and c.args.get("channel") == channel
        and c.args.get("thread_ts") == thread_ts
        and any(b.get("block_id", "").startswith("council-a-") for b in c.args.get("blocks") or [])
    ]


async def test_shortcut_asks_about_the_message_in_its_thread(env, llm):
    fake = env.fake
    note = fake.share_file("note.txt", b"The launch moved to the 14th of March.", "text/plain", "text")
    ts = fake.add_message("C1", "Can we still ship the beta on time?", user="U2", files=[note])
    message = fake.find("C1", ts)

    assert await message_action(env, message) == 200
    await env.settle()
    [modal] = [v for v in fake.views if v.get("callback_id") == "council_ask_message_view"]
    shown = json.dumps(modal["blocks"])
    assert "Can we still ship the beta on time?" in shown and "note.txt" in shown

    values = {"question": {"question": {"type": "plain_text_input", "value": "What are the risks here?"}}}
    await submit_view(env, modal, values)
    await fake.wait_for(lambda: thread_answers(fake, "C1", ts), timeout=30)
    first = [r for r in llm.requests if r.stage == 1]
    assert first
    prompt = json.dumps(first[0].messages)
    assert "What are the risks here?" in prompt
    assert "Can we still ship the beta on time?" in prompt  # the message, as conversation
    assert "14th of March" in prompt  # its file, read


async def test_shortcut_refusal_goes_to_the_asker_in_the_thread(env, llm):
    fake = env.fake
    ts = fake.add_message("C1", "Some message", user="U2")
    assert await message_action(env, fake.find("C1", ts)) == 200
    await env.settle()
    [modal] = [v for v in fake.views if v.get("callback_id") == "council_ask_message_view"]
    await submit_view(env, modal, {"question": {"question": {"type": "plain_text_input", "value": "x" * 5000}}})
    await env.settle()
    assert not thread_answers(fake, "C1", ts) and not llm.requests
    [refused] = [e for e in fake.ephemerals if e.get("thread_ts") == ts]
    assert refused["user"] == "U1" and "the limit is 4,000" in refused["text"]


async def test_the_modal_offers_the_allowed_models_and_its_choice_picks_the_council(env, llm):
    # issue 33: the modal's selects list the models the channel allows; what is picked answers
    fake = env.fake
    ts = fake.add_message("C1", "Is the beta ready?", user="U2")
    assert await message_action(env, fake.find("C1", ts)) == 200
    await env.settle()
    [modal] = [v for v in fake.views if v.get("callback_id") == "council_ask_message_view"]
    selects = {b["block_id"]: b["element"] for b in modal["blocks"] if b.get("type") == "input"}
    assert selects["members"]["type"] == "multi_static_select"
    assert [o["value"] for o in selects["chairman"]["options"]] == ["alpha", "beta", "gamma"]
    chosen = [{"text": {"type": "plain_text", "text": m}, "value": m} for m in ("gamma", "beta")]
    values = {
        "question": {"question": {"type": "plain_text_input", "value": "Ready?"}},
        "members": {"members": {"type": "multi_static_select", "selected_options": chosen}},
        "chairman": {"chairman": {"type": "static_select", "selected_option": chosen[0]}},
    }
    await submit_view(env, modal, values)
    await fake.wait_for(lambda: thread_answers(fake, "C1", ts), timeout=30)
    assert sorted(r.model for r in llm.requests_for(stage=1)) == ["beta", "gamma"]
    assert [r.model for r in llm.requests_for(stage=3)] == ["gamma"]


async def test_council_pick_opens_a_modal_whose_choice_picks_the_council(env, llm):
    # issue 33: `/council pick` opens the question form with the members and chairman selects
    fake = env.fake
    await env.command("pick")
    await env.settle()
    [modal] = [v for v in fake.views if v.get("callback_id") == "council_pick_view"]
    selects = {b["block_id"]: b["element"] for b in modal["blocks"] if b.get("type") == "input"}
    assert [o["value"] for o in selects["members"]["options"]] == ["alpha", "beta", "gamma"]
    chosen = [{"text": {"type": "plain_text", "text": m}, "value": m} for m in ("beta", "gamma")]
    values = {
        "question": {"question": {"type": "plain_text_input", "value": "What is six times seven?"}},
        "members": {"members": {"type": "multi_static_select", "selected_options": chosen}},
        "chairman": {"chairman": {"type": "static_select", "selected_option": chosen[1]}},
    }
    await submit_view(env, modal, values)
    await fake.wait_for(lambda: [r for r in llm.requests if r.stage == 3], timeout=30)
    await env.settle()
    assert sorted(r.model for r in llm.requests_for(stage=1)) == ["beta", "gamma"]
    assert [r.model for r in llm.requests_for(stage=3)] == ["gamma"]
    question = [c for c in fake.calls_to("chat.postMessage") if "What is six times seven?" in json.dumps(c.args)]
    assert question and question[0].args["channel"] == "C1"  # posted in the channel, as /council does
