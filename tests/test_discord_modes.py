"""Issues 12 and 23 on Discord: the `mode` option of /council (quick, auto) and the `auto:`
keyword, `/council-admin mode`, a seat's fallback shown."""

from __future__ import annotations

import json

import pytest

from core.models import Origin, Platform
from tests import test_discord_adapter
from tests.discord_fake import FakeDiscord
from tests.llm_server import Fail, council_member
from tests.test_discord_adapter import (
    BASIC_PERMISSIONS,
    MANAGE_GUILD,
    answer_messages,
    council_option,
    ephemeral_replies,
    subcommand,
    wait_finished,
)

env = test_discord_adapter.env  # the fixture


def replied(fake: FakeDiscord, token: str) -> bool:
    replies = ephemeral_replies(fake, token)
    return bool(replies and replies[0]["content"])


def origin_of(fake: FakeDiscord) -> Origin:
    return Origin(platform=Platform.DISCORD, workspace_id=str(fake.guild_id), channel_id=str(fake.channel_id))


async def test_mode_option_runs_a_quick_council(env, llm):
    fake = env.fake
    await fake.push_command(
        "council", [*council_option("What is 6 x 7?"), {"name": "mode", "type": 3, "value": "quick"}]
    )
    await wait_finished(fake)
    [summary] = await env.service.queries.history(origin_of(fake), "channel")
    assert summary.mode == "quick"
    assert len(llm.requests_for(stage=1)) == 2 and not llm.requests_for(stage=2)


async def test_admin_mode_command(env, llm):
    fake = env.fake
    done = await fake.push_command(
        "council-admin", subcommand("mode", mode="quick"), permissions=BASIC_PERMISSIONS | MANAGE_GUILD, user_id=777
    )
    await fake.wait_for(
        lambda: ephemeral_replies(fake, done.token) and ephemeral_replies(fake, done.token)[0]["content"], 10
    )
    [reply] = ephemeral_replies(fake, done.token)
    assert reply["content"] == "Mode: quick."
    assert {"name": "Mode", "value": "quick", "inline": False} in reply["embeds"][0]["fields"]
    assert (await env.service.channels.channel_settings(origin_of(fake))).mode == "quick"


async def test_a_seats_fallback_is_shown_with_the_answer(env, llm):
    fake = env.fake
    llm.script("broken", Fail(401, "invalid api key"))
    done = await fake.push_command(
        "council-admin",
        subcommand("members", members="broken|gamma alpha beta"),
        permissions=BASIC_PERMISSIONS | MANAGE_GUILD,
        user_id=777,
    )
    await fake.wait_for(
        lambda: ephemeral_replies(fake, done.token) and ephemeral_replies(fake, done.token)[0]["content"], 10
    )
    await fake.push_command("council", council_option("Who answers for broken?"))
    await wait_finished(fake)
    shown = json.dumps([c.json for c in fake.calls if c.method in ("POST", "PATCH") and isinstance(c.json, dict)])
    assert "answered by the fallback gamma (broken failed: auth 401" in shown


async def test_auto_mode_option_and_keyword(env, llm):
    fake = env.fake
    for name in ("alpha", "beta"):
        llm.script(name, council_member("42."))
    await fake.push_command(
        "council", [*council_option("What is 6 x 7?"), {"name": "mode", "type": 3, "value": "auto"}]
    )
    await wait_finished(fake)
    [summary] = await env.service.queries.history(origin_of(fake), "channel")
    assert summary.mode == "auto" and len(llm.requests) == 2
    shown = json.dumps([m["embeds"] for m in answer_messages(fake)])
    assert "the first two answers were the same" in shown and "Fallback" not in shown
    llm.script("alpha", council_member("alpha says 42."))  # the first two now differ: escalation
    await fake.push_command("council", council_option("auto: What is 6 x 7 again?"))
    await wait_finished(fake, 2)
    newest = (await env.service.queries.history(origin_of(fake), "channel"))[0]
    assert newest.mode == "auto" and newest.question == "What is 6 x 7 again?"
    result = await env.service.queries.get_result(newest.council_id)
    assert result.escalated and len(llm.requests_for(stage=2)) == 3


async def test_members_and_chairman_options_and_prefix(env, llm):
    # issue 33: the /council options, then the `members: ...; chairman: ...` prefix of a mention
    fake = env.fake
    await fake.push_command(
        "council",
        [
            *council_option("What is 6 x 7?"),
            {"name": "members", "type": 3, "value": "gamma, beta"},
            {"name": "chairman", "type": 3, "value": "gamma"},
        ],
    )
    await wait_finished(fake)
    [summary] = await env.service.queries.history(origin_of(fake), "channel")
    assert (summary.members, summary.chairman) == (["gamma", "beta"], "gamma")
    await fake.push_message(f"<@{fake.bot_id}> members: alpha, gamma; chairman: alpha What is 6 x 8?")
    await wait_finished(fake, count=2)
    latest = (await env.service.queries.history(origin_of(fake), "channel"))[0]
    assert (latest.members, latest.chairman, latest.question) == (["alpha", "gamma"], "alpha", "What is 6 x 8?")


async def test_a_model_the_channel_does_not_allow_is_refused(env, llm):
    fake = env.fake
    llm.script("delta", council_member("delta says 42."))
    done = await fake.push_command(
        "council", [*council_option("Q?"), {"name": "members", "type": 3, "value": "alpha delta"}]
    )
    refusal = "`delta` is not allowed here; this channel allows: alpha, beta, gamma."
    await fake.wait_for(lambda: any(refusal in m["content"] for m in ephemeral_replies(fake, done.token)))
    assert not llm.requests
    admin = await fake.push_command(
        "council-admin",
        subcommand("allow", models="alpha, delta"),
        permissions=BASIC_PERMISSIONS | MANAGE_GUILD,
        user_id=777,
    )
    await fake.wait_for(lambda: replied(fake, admin.token))
    assert await env.service.channels.allowed(origin_of(fake)) == ["alpha", "delta"]


ROLE_ID = 424242


@pytest.mark.parametrize("env", [{"COUNCIL_UNSURE_BELOW": "101"}], indirect=True)
async def test_an_unsure_answer_says_so_first_and_mentions_the_channel_s_role(env, llm):
    fake = env.fake
    role = {
        "id": str(ROLE_ID), "name": "oncall", "color": 0, "hoist": False, "position": 1,
        "permissions": "0", "managed": False, "mentionable": True,
    }  # fmt: skip
    option = {"name": "unsure", "type": 1, "options": [{"name": "role", "type": 8, "value": str(ROLE_ID)}]}
    done = await fake.push_command(
        "council-admin", [option], permissions=BASIC_PERMISSIONS | MANAGE_GUILD, user_id=777, roles=[role]
    )
    await fake.wait_for(lambda: replied(fake, done.token), 10)
    assert ephemeral_replies(fake, done.token)[0]["content"] == f"An unsure answer here mentions <@&{ROLE_ID}>."
    assert (await env.service.channels.channel_settings(origin_of(fake))).unsure_mention == f"role:{ROLE_ID}"
    await fake.push_command("council", council_option("What is 6 x 7?"))
    await wait_finished(fake)

    def mentions() -> list:
        posts = [c for c in fake.calls if c.method == "POST" and isinstance(c.json, dict)]
        return [c for c in posts if str(c.json.get("content", "")).startswith(f"<@&{ROLE_ID}>")]

    await fake.wait_for(lambda: mentions(), 10)
    [answer] = answer_messages(fake)
    assert answer["embeds"][0]["description"].startswith("❔ The council is unsure (consensus ")
    [call] = mentions()
    assert call.json["content"].startswith(f"<@&{ROLE_ID}> The council is unsure (consensus ")
    # the one message that may ping, and only that role
    assert call.json["allowed_mentions"] == {"parse": [], "roles": [ROLE_ID]}
