"""Refine, lenses and Self-MoA in the chat apps, through the fake Slack Web API and the fake Discord: the
`refine:` keyword, `/council-admin lens` (a preset, a persona, `off`, and the one-line refusals), the
lens reaching only its member, the round line and the samples line with the answer."""

from __future__ import annotations

from core.models import Origin, Platform
from tests import test_discord_adapter, test_slack_adapter
from tests.llm_server import REVISION, Reply
from tests.test_discord_adapter import (
    BASIC_PERMISSIONS,
    MANAGE_GUILD,
    answer_messages,
    council_option,
    ephemeral_replies,
    subcommand,
    wait_finished,
)
from tests.test_discord_modes import origin_of
from tests.test_slack_adapter import all_text, ephemeral_texts, results

slack_env = test_slack_adapter.env  # the fixtures
env = test_discord_adapter.env
ORIGIN = Origin(platform=Platform.SLACK, workspace_id="T1", channel_id="C1")
PERSONA = "Answer as the engineer who will be paged at 3 a.m. when this goes wrong."
ALPHA = "The capital of Australia is Canberra. It was chosen in 1908 as a compromise between Sydney and Melbourne."
GAMMA = "The capital of Australia is Sydney. It is the largest city of the country and its financial centre."


def australia(llm) -> None:
    llm.models["alpha"].stage1 = Reply(ALPHA)
    llm.models["gamma"].stage1 = Reply(GAMMA)
    llm.models["gamma"].revise = Reply(f"REASON: the first answer gives the year.\n{ALPHA}")


async def test_slack_refine_with_a_lens_set_by_an_admin(slack_env, llm):
    australia(llm)
    env = slack_env
    await env.command(f"lens alpha {PERSONA}", user="UADMIN", command="/council-admin")
    await env.command("lens beta skeptc", user="UADMIN", command="/council-admin")
    await env.command("lens nobody skeptic", user="UADMIN", command="/council-admin")
    await env.command("lens beta skeptic", user="U2", command="/council-admin")  # not an admin
    await env.settle()
    texts = ephemeral_texts(env.fake)
    assert any("`alpha` here: lens: “Answer as the engineer who will be paged" in t for t in texts)
    assert any("Unknown lens preset `skeptc`" in t for t in texts)
    assert any("`nobody` is not a member here" in t for t in texts)
    settings = await env.service.channels.channel_settings(ORIGIN)
    assert set(settings.lenses or {}) == {"alpha"}  # the refused ones changed nothing
    await env.command("show", user="U2", command="/council-admin")
    await env.settle()
    assert any("*alpha:* lens: " in t and "Answer as the engineer" in t for t in ephemeral_texts(env.fake))
    await env.command("refine: What is the capital of Australia?")
    await env.fake.wait_for(lambda: results(env.fake))
    await env.settle()
    [answer] = results(env.fake)
    shown = all_text(answer)
    assert "Round 1: gamma moved toward alpha; alpha and beta held" in shown
    assert "alpha: lens: “Answer as the engineer" in shown
    assert len(llm.requests_for(stage=REVISION)) == 3
    alpha = llm.requests_for("alpha", stage=1) + llm.requests_for("alpha", stage=REVISION)
    assert alpha and all(PERSONA in r.system for r in alpha)
    assert not any(PERSONA in r.system + r.user for r in llm.requests if r not in alpha)
    await env.command("lens alpha off", user="UADMIN", command="/council-admin")
    await env.settle()
    assert not (await env.service.channels.channel_settings(ORIGIN)).lenses


async def test_discord_lens_command_and_self_moa(env, llm):
    fake = env.fake
    done = await fake.push_command(
        "council-admin",
        subcommand("lens", member="beta", persona="first-principles"),
        permissions=BASIC_PERMISSIONS | MANAGE_GUILD,
        user_id=777,
    )
    await fake.wait_for(
        lambda: ephemeral_replies(fake, done.token) and ephemeral_replies(fake, done.token)[0]["content"], 10
    )
    [reply] = ephemeral_replies(fake, done.token)
    assert reply["content"] == "beta: lens: first-principles."
    lenses = (await env.service.channels.channel_settings(origin_of(fake))).lenses
    assert lenses is not None and lenses["beta"].preset == "first-principles"
    await fake.push_command(
        "council", [*council_option("What is 6 x 7?"), {"name": "mode", "type": 3, "value": "self-moa"}]
    )
    await wait_finished(fake)
    assert [r.model for r in llm.requests_for(stage=1)] == ["alpha"] * 6 and not llm.requests_for(stage=2)
    shown = str(answer_messages(fake))
    assert "6 samples of alpha, aggregated by" in shown
