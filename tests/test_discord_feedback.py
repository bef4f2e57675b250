"""Readers' 👍 / 👎 on Discord, end to end: the real discord.py client against the fake Discord
(REST + gateway on loopback), a real CouncilService on SQLite. Votes are stored like Slack's,
the buttons work after a restart, and 👎 asks "what was wrong?" in a modal."""

# ruff: noqa: F811  (the `env` fixture is imported from the adapter tests and named as a parameter)
from __future__ import annotations

from core.models.feedback import Vote
from tests.test_discord_adapter import (  # noqa: F401 (fixture)
    answer_messages,
    council_option,
    env,
    ephemeral_replies,
    wait_finished,
)


def feedback_ids(answer: dict) -> dict[str, str]:
    return {
        c["custom_id"].split(":")[1]: c["custom_id"]
        for row in answer["components"]
        for c in row["components"]
        if c["custom_id"].startswith("council_fb:")
    }


async def test_votes_are_stored_changeable_persistent_and_commented(env):
    fake = env.fake
    await fake.push_command("council", council_option("What is six times seven?"))
    await wait_finished(fake)
    [answer] = answer_messages(fake)
    buttons = feedback_ids(answer)
    council_id = buttons["good"].split(":")[2]
    assert [c.get("emoji", {}).get("name") for row in answer["components"][1:] for c in row["components"]] == [
        "👍",
        "👎",
    ]

    click = await fake.push_component(int(answer["id"]), buttons["good"], user_id=501)
    await fake.wait_for(lambda: ephemeral_replies(fake, click.token), 10)
    [ack] = ephemeral_replies(fake, click.token)
    assert ack["flags"] & 64 and "👍" in ack["content"] and council_id in ack["content"]
    [(voter, vote)] = [(v.user_id, v.vote) for v in await env.service.feedback.votes(council_id)]
    assert (voter, vote) == ("501", Vote.GOOD)

    await env.restart()  # persistent buttons: a new process still takes the clicks
    click = await fake.push_component(int(answer["id"]), buttons["bad"], user_id=501)
    await fake.wait_for(lambda: fake.modals, 10)
    [modal] = fake.modals
    assert modal["title"] == "What was wrong?" and modal["token"] == click.token
    [vote] = await env.service.feedback.votes(council_id)
    assert vote.vote is Vote.BAD  # changed, not added

    submit = await fake.push_modal_submit(modal, {"comment": "It forgot to show the working."}, user_id=501)
    await fake.wait_for(lambda: ephemeral_replies(fake, submit.token), 10)
    assert "comment" in ephemeral_replies(fake, submit.token)[0]["content"]
    [vote] = await env.service.feedback.votes(council_id)
    assert vote.comment == "It forgot to show the working." and vote.vote is Vote.BAD

    # 👍 offers the same modal through "Add a comment".
    click = await fake.push_component(int(answer["id"]), buttons["good"], user_id=502)
    await fake.wait_for(lambda: ephemeral_replies(fake, click.token), 10)
    [ack] = ephemeral_replies(fake, click.token)
    [comment_button] = [c for row in ack["components"] for c in row["components"]]
    again = await fake.push_component(int(ack["id"]), comment_button["custom_id"], user_id=502)
    await fake.wait_for(lambda: len(fake.modals) == 2, 10)
    assert fake.modals[1]["title"] == "Anything to add?" and fake.modals[1]["token"] == again.token
    assert {v.user_id: v.vote for v in await env.service.feedback.votes(council_id)} == {
        "501": Vote.BAD,
        "502": Vote.GOOD,
    }
    board = await env.service.leaderboard(None, "all", rounds=50)
    assert {a.model: a.chairman_good + a.chairman_bad for a in board.approval}.get("alpha") == 2
