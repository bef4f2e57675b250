"""Slack's edge answering an outage (issue 22, item 5): HTTP 503 with a plain-text or HTML page,
HTML labelled `application/json`, or nothing. slack_sdk raises SlackApiError with a response that
is no Web API JSON (a string, an empty dict, or aiohttp's ClientResponse); no failure path may
fail again while reading it. The real Bolt app over HTTP against the fake Slack Web API."""

# ruff: noqa: F811  (the `env` fixture is imported from the adapter tests and named as a parameter)
from __future__ import annotations

import json
import logging

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.errors import error_code, http_status, refusal, retry_after_of
from tests.slack_fake import OUTAGE_BODIES, FakeSlack
from tests.test_slack_adapter import SlackEnv, env, ephemeral_texts, results  # noqa: F401 (fixture)

KINDS = list(OUTAGE_BODIES)
NOT_JSON = "HTTP 503, not a Web API answer"


async def failure(fake: FakeSlack, method: str = "users.info") -> SlackApiError:
    client = AsyncWebClient(token=fake.token, base_url=fake.api_url + "/")
    with pytest.raises(SlackApiError) as raised:
        await client.api_call(method, params={"user": "U1"})
    return raised.value


@pytest.mark.parametrize("kind", KINDS)
async def test_a_body_that_is_not_the_web_apis_json_is_read_as_no_error_code(kind):
    fake = await FakeSlack().start()
    try:
        fake.outage("users.info", kind)
        exc = await failure(fake)
    finally:
        await fake.close()
    assert (error_code(exc), http_status(exc), refusal(exc), retry_after_of(exc)) == ("", 503, NOT_JSON, None)


async def test_the_web_apis_own_refusals_read_as_before():
    fake = await FakeSlack().start()
    try:
        fake.fail("users.info", "user_not_found")
        refused = await failure(fake)
        fake.ratelimit("users.info", retry_after=7)
        limited = await failure(fake)
    finally:
        await fake.close()
    assert (error_code(refused), refusal(refused), retry_after_of(refused)) == (
        "user_not_found",
        "user_not_found",
        None,
    )
    assert (error_code(limited), http_status(limited), retry_after_of(limited)) == ("ratelimited", 429, 7.0)
    assert refusal(SlackApiError("no response", None)) == "no response" and error_code(ValueError("x")) == ""


def failures_in(records: list[logging.LogRecord]) -> list[str]:
    """Log records that say a handler broke (tracebacks, AttributeError) rather than a call failed."""
    return [
        r.getMessage()
        for r in records
        if r.exc_info or r.levelno >= logging.ERROR or "AttributeError" in r.getMessage()
    ]


@pytest.mark.parametrize("kind", KINDS)
async def test_the_home_tab_publishes_when_users_info_is_down(env: SlackEnv, kind, caplog):
    caplog.set_level(logging.INFO)
    env.fake.outage("users.info", kind)
    await env.event({"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home", "view": {}})
    await env.settle()
    assert "Your recent councils" in json.dumps(env.fake.home_views["U1"])  # published, as for a non-admin
    assert f"users.info failed for U1: {NOT_JSON}" in caplog.text
    assert failures_in(caplog.records) == []


@pytest.mark.parametrize("kind", KINDS)
async def test_a_home_tab_publish_that_fails_is_one_log_line_and_the_next_one_works(env: SlackEnv, kind, caplog):
    caplog.set_level(logging.INFO)
    env.fake.outage("views.publish", kind)
    opened = {"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home", "view": {}}
    await env.event(opened)
    await env.settle()
    assert "U1" not in env.fake.home_views
    assert f"views.publish failed: {NOT_JSON}" in caplog.text and failures_in(caplog.records) == []
    await env.event(opened)
    await env.settle()
    assert "U1" in env.fake.home_views


@pytest.mark.parametrize("kind", KINDS)
async def test_a_question_that_cannot_be_posted_tells_the_asker(env: SlackEnv, kind, caplog):
    caplog.set_level(logging.INFO)
    env.fake.outage("chat.postMessage", kind)
    status, _ = await env.command("What is six times seven?")
    await env.settle()
    assert status == 200
    assert any(f"I could not post in this channel ({NOT_JSON})." in text for text in ephemeral_texts(env.fake))
    assert failures_in(caplog.records) == []


@pytest.mark.parametrize("kind", KINDS)
async def test_a_council_survives_its_status_edits_failing(env: SlackEnv, kind, caplog):
    """The runner asks the surface whether a failed write was rate limited (retry_after_of) and
    goes on without it: the answer is still posted."""
    caplog.set_level(logging.INFO)
    env.fake.outage("chat.update", kind, times=50)
    await env.event(env.mention("<@UBOT> What is six times seven?"))
    await env.fake.wait_for(lambda: results(env.fake))
    await env.settle()
    assert any(c.status == 503 for c in env.fake.calls_to("chat.update"))
    assert [r for r in results(env.fake)] and failures_in(caplog.records) == []


@pytest.mark.parametrize("kind", KINDS)
async def test_an_export_whose_direct_message_cannot_be_opened_says_so(env: SlackEnv, kind, caplog):
    fake = env.fake
    await env.command("What is six times seven?")
    await fake.wait_for(lambda: results(fake))
    await env.settle()
    council_id = results(fake)[0].args["blocks"][0]["block_id"].split("-")[2]
    caplog.set_level(logging.INFO)
    fake.outage("conversations.open", kind)
    await env.command(f"export {council_id}")
    await env.settle()
    assert any(f"Slack did not take it ({NOT_JSON}). Try again" in text for text in ephemeral_texts(fake))
    assert f"/council export: a Slack call failed: {NOT_JSON}" in caplog.text and failures_in(caplog.records) == []
