"""Slack's agent experience, the Home tab and readers' feedback, end to end: the real Bolt app
over HTTP on loopback, the fake Slack Web API with the documented payloads of the new events
(app_home_opened, app_context_changed), interactions (block_actions of feedback_buttons,
view_submission) and methods (assistant.threads.setStatus / setTitle / setSuggestedPrompts,
views.publish, views.open), scripted models, and a real CouncilService on SQLite."""

# ruff: noqa: F811  (the `env` fixture is imported from the adapter tests and named as a parameter)
from __future__ import annotations

import json
import time
from typing import Any

import pytest

from core.models.feedback import Vote
from tests.slack_fake import encode_form
from tests.test_slack_adapter import SlackEnv, all_text, env, ephemeral_texts, results, stored_councils  # noqa: F401 (fixture)


def dm_event(env: SlackEnv, text: str, *, thread_ts: str | None = None, user: str = "U1") -> dict[str, Any]:
    """A message in the app's Messages tab: under agent_view a top-level DM (or a reply in one)."""
    ts = env.fake.add_message("D1", text, user=user, thread_ts=thread_ts)
    event = {"type": "message", "channel_type": "im", "user": user, "text": text, "ts": ts, "channel": "D1"}
    event["team"] = "T1"
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


async def interact(env: SlackEnv, payload: dict[str, Any]) -> int:
    status, _ = await env.post(encode_form({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
    return status


async def click_feedback(env: SlackEnv, value: str, *, user: str = "U1", channel: str = "C1", message_ts: str) -> int:
    """block_actions of a feedback_buttons element (docs.slack.dev: the clicked button's value)."""
    return await interact(
        env,
        {
            "type": "block_actions",
            "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": "T1"},
            "api_app_id": "A1",
            "token": "legacy",
            "container": {"type": "message", "message_ts": message_ts, "channel_id": channel, "is_ephemeral": False},
            "trigger_id": env.next_id("trigger."),
            "team": {"id": "T1", "domain": "test"},
            "channel": {"id": channel, "name": "general"},
            "message": {"type": "message", "ts": message_ts, "text": ""},
            "response_url": env.fake.response_url(env.next_id("fb")),
            "actions": [
                {
                    "type": "feedback_buttons",
                    "action_id": "council_feedback",
                    "block_id": "council-fb-x",
                    "value": value,
                    "text": {"type": "plain_text", "text": "👍" if value.startswith("good") else "👎"},
                    "action_ts": str(time.time()),
                }
            ],
        },
    )


async def submit_view(env: SlackEnv, view: dict[str, Any], values: dict[str, Any], *, user: str = "U1") -> int:
    """view_submission of a modal the app opened, with the state Slack sends back."""
    return await interact(
        env,
        {
            "type": "view_submission",
            "team": {"id": "T1", "domain": "test"},
            "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": "T1"},
            "api_app_id": "A1",
            "token": "legacy",
            "trigger_id": env.next_id("trigger."),
            "view": {**view, "id": view.get("id", "V1"), "hash": "h1", "state": {"values": values}},
            "response_urls": [],
            "is_enterprise_install": False,
        },
    )


async def ask_in_channel(env: SlackEnv) -> tuple[str, str]:
    """(council id, ts of the answer message) of a council asked by mention in C1."""
    fake = env.fake
    await env.event(env.mention("<@UBOT> What is six times seven?"))
    await fake.wait_for(lambda: results(fake))
    await env.settle()
    [answer] = results(fake)
    council_id = answer.args["blocks"][0]["block_id"].split("-")[2]
    return council_id, answer.response["ts"]


async def test_messages_tab_offers_suggested_prompts_and_follows_the_viewed_channel(env):
    fake = env.fake
    await env.event({"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "messages"})
    await env.settle()
    [offered] = fake.suggested_prompts
    assert offered["channel"] == "D1" and offered["title"]
    titles = [p["title"] for p in offered["prompts"]]
    assert titles[0] == "Compare two approaches to…" and len(titles) <= 4
    assert all(p["message"] for p in offered["prompts"])

    context = {"entities": [{"type": "slack#/types/channel_id", "value": "C5", "team_id": "T1"}]}
    await env.event({"type": "app_context_changed", "user": "U1", "channel": "D1", "context": context})
    await env.event({"type": "app_context_changed", "user": "U1", "channel": "D1", "context": {}})
    await env.settle()
    viewing, plain = fake.suggested_prompts[1:]
    assert "<#C5>" in viewing["prompts"][0]["message"] and len(viewing["prompts"]) <= 4
    assert [p["title"] for p in plain["prompts"]] == titles


@pytest.mark.parametrize(
    "env", [{"SLACK_SUGGESTED_PROMPTS": "Pros and cons | Pros and cons of Rust?; Why?"}], indirect=True
)
async def test_suggested_prompts_are_configurable(env):
    await env.event({"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "messages"})
    await env.settle()
    assert env.fake.suggested_prompts[0]["prompts"] == [
        {"title": "Pros and cons", "message": "Pros and cons of Rust?"},
        {"title": "Why?", "message": "Why?"},
    ]


@pytest.mark.parametrize("env", [{}, {"streaming": True}], indirect=True, ids=["chat.update", "streamed"])
async def test_a_top_level_dm_is_a_conversation_with_title_status_and_feedback(env, llm):
    fake = env.fake
    first = dm_event(env, "What   is six\ntimes seven?")
    await env.event(first)
    await fake.wait_for(lambda: results(fake, "D1") or fake.stream("D1", fake.thread("D1", first["ts"])[-1]["ts"]))
    await env.settle()
    assert fake.thread_titles[("D1", first["ts"])] == "What is six times seven?"
    shown = [s["status"] for s in fake.thread_status if s["thread_ts"] == first["ts"]]
    assert shown[0] == "is thinking…" and "is reviewing…" in shown and "is writing…" in shown
    assert shown[-1] == ""  # cleared once the answer is there
    assert all(s["loading"] for s in fake.thread_status if s["status"])
    # The answer, in the conversation's thread, carries the feedback buttons.
    answer = json.dumps([m for m in fake.thread("D1", first["ts"]) if m.get("user") != "U1"])
    assert '"feedback_buttons"' in answer and '"context_actions"' in answer

    # A reply in that thread continues the conversation: the first exchange is its history.
    llm.requests.clear()
    reply = dm_event(env, "And times eight?", thread_ts=first["ts"])
    await env.event(reply)
    await env.settle()
    prompts = [json.dumps(r.messages) for r in llm.requests_for(stage=1)]
    assert prompts and all("six" in p and "times seven" in p for p in prompts)
    assert await stored_councils(env, "D1") == 2


async def test_status_line_refused_does_not_stop_the_council(env):
    fake = env.fake
    fake.fail("assistant.threads.setStatus", "not_allowed_token_type", times=1)
    fake.fail("assistant.threads.setTitle", "not_allowed_token_type", times=1)
    event = dm_event(env, "What is six times seven?")
    await env.event(event)
    await fake.wait_for(lambda: results(fake, "D1"))
    await env.settle()
    assert not fake.thread_status  # refused once: not asked again for this council
    assert len(fake.calls_to("assistant.threads.setStatus")) == 1


async def test_feedback_click_is_stored_acknowledged_changeable_and_commented(env):
    fake = env.fake
    council_id, answer_ts = await ask_in_channel(env)

    await click_feedback(env, f"bad:{council_id}", user="U2", message_ts=answer_ts)
    await env.settle()
    [vote] = await env.service.feedback.votes(council_id)
    assert (vote.user_id, vote.vote) == ("U2", Vote.BAD)
    assert any("👎" in text and council_id in text for text in ephemeral_texts(fake))
    [modal] = [v for v in fake.views if v.get("callback_id") == "council_feedback_view"]
    assert "What was wrong?" in json.dumps(modal)

    await submit_view(
        env, modal, {"feedback_comment": {"comment": {"type": "plain_text_input", "value": "Off by one."}}}, user="U2"
    )
    await env.settle()
    [vote] = await env.service.feedback.votes(council_id)
    assert vote.comment == "Off by one." and vote.vote is Vote.BAD
    assert any("comment" in text and council_id in text for text in ephemeral_texts(fake))

    await click_feedback(env, f"good:{council_id}", user="U2", message_ts=answer_ts)  # changed, not added
    await click_feedback(env, f"good:{council_id}", user="U1", message_ts=answer_ts)
    await env.settle()
    votes = {v.user_id: v for v in await env.service.feedback.votes(council_id)}
    assert votes["U2"].vote is Vote.GOOD and votes["U2"].comment == "Off by one." and votes["U1"].vote is Vote.GOOD
    assert len([v for v in fake.views if v.get("callback_id") == "council_feedback_view"]) == 1  # 👍: no modal

    # A forged click on a council of another workspace's channel is refused privately and stores nothing.
    other = env.service.runs.get(council_id)
    assert other is None or other.done
    await click_feedback(env, "good:0123456789abcdef", user="U1", message_ts=answer_ts)
    await env.settle()
    assert len(await env.service.feedback.votes(council_id)) == 2
    assert any("cannot take feedback" in text for text in ephemeral_texts(fake))


async def test_home_tab_shows_councils_leaderboard_configurations_and_admin_settings(env):
    fake = env.fake
    council_id, answer_ts = await ask_in_channel(env)
    await click_feedback(env, f"good:{council_id}", user="U1", message_ts=answer_ts)
    await env.settle()

    await env.event({"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home", "view": {}})
    await env.settle()
    home = json.dumps(fake.home_views["U1"], ensure_ascii=False)
    assert "Your recent councils" in home and council_id in home and "six times seven" in home
    assert "Leaderboard" in home and "👍 as chairman" in home and "100% (1/1)" in home
    assert "Channels' council configurations" in home and "Default: members alpha, beta, gamma" in home
    assert "council_home_admin" not in home  # not an admin: no settings form

    await env.event({"type": "app_home_opened", "user": "UADMIN", "channel": "D2", "tab": "home", "view": {}})
    await env.settle()
    assert "council_home_admin" in json.dumps(fake.home_views["UADMIN"])
    await env.action("council_home_admin", "open", user="UADMIN")
    await env.settle()
    [form] = [v for v in fake.views if v.get("callback_id") == "council_home_admin_view"]
    values = {
        "channel": {"channel": {"type": "conversations_select", "selected_conversation": "C2"}},
        "members": {"members": {"type": "plain_text_input", "value": "alpha, beta"}},
        "chairman": {"chairman": {"type": "plain_text_input", "value": None}},
        "user": {"user": {"type": "number_input", "value": "3"}},
        "channel_limit": {"channel_limit": {"type": "number_input", "value": None}},
        "budget": {"budget": {"type": "number_input", "value": None}},
        "reset": {"reset": {"type": "checkboxes", "selected_options": []}},
    }
    await submit_view(env, form, values, user="UADMIN")
    await env.settle()
    home = json.dumps(fake.home_views["UADMIN"], ensure_ascii=False)
    assert "<#C2>: members, limits saved." in home and "<#C2>: members alpha, beta" in home and "3/h per user" in home
    [entry, *_] = await env.service.storage.channels.audit_log("slack:T1:C2")
    assert entry.actor_id == "UADMIN" and entry.action == "set_limits"

    # The same form from someone who is no admin changes nothing: the service refuses.
    await submit_view(
        env, form, {**values, "members": {"members": {"type": "plain_text_input", "value": "gamma, beta"}}}
    )
    await env.settle()
    assert "Only admins" in json.dumps(fake.home_views["U1"])
    assert (await env.service.channels.channel_settings(env.bot.origin("T1", "C2", "U1"))).members == ["alpha", "beta"]
    assert not [c for c in fake.calls_to("views.publish") if not c.ok]
    assert all("invalid" not in all_text(c) for c in fake.calls_to("views.open"))
