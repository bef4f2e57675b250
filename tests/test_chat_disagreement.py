"""Where the members stand, in Slack and Discord (against the fakes): the answer carries a "Where
they differ" button like the stage buttons, the section it opens shows the account, and the
chairman's section text never shows in the answer, streamed or not."""

from __future__ import annotations

import json
import re

import pytest

from core.models.voice import DIFFER_TITLE
from tests.llm_server import council_member
from tests.test_discord_adapter import answer_messages, ephemeral_replies, wait_finished
from tests.test_discord_adapter import env as discord_env  # noqa: F401 (fixture)
from tests.test_slack_adapter import env, results  # noqa: F401 (env: fixture)

_BLOCK = re.compile(r"<<<RESPONSE ([A-Z]) [0-9a-f]{16}>>>\n(.*?)\n<<<END RESPONSE", re.S)


# The chairman sees no model id (prompts redact them): each answer is known by its own word.
WORDS = {"alpha": "basalt", "beta": "fjords", "gamma": "deltas"}


def section_writer(call) -> str:
    """alpha chairs (tests/conftest.py): its answer, then the section naming the members by label."""
    label = {m: letter for letter, text in _BLOCK.findall(call.user) for m, word in WORDS.items() if word in text}
    return (
        "Final answer by alpha: 42.\n\nWHERE THEY DIFFER\nContested:\n- Whether 42 is a joke\n"
        f"  - Response {label['beta']}: it is a joke <@here>\n"
        f"  - Response {label['gamma']}: it is the answer\n"
        f"Unique:\n- Response {label['beta']}: towels matter\n"
    )


def chair_writes_the_section(llm) -> None:
    for m, word in WORDS.items():
        llm.script(m, council_member(f"The answer is 42, as the {word} show.", synthesis="Final answer by alpha: 42."))
    llm.script("alpha", council_member("The answer is 42, as the basalt show.", synthesis=section_writer))


@pytest.mark.parametrize("env", [{}, {"streaming": True}], indirect=True, ids=["updates", "streaming"])
async def test_slack_has_a_where_they_differ_button(env, llm):  # noqa: F811
    chair_writes_the_section(llm)
    fake = env.fake
    await env.command("What is the answer?")
    await fake.wait_for(lambda: results(fake) or fake.calls_to("chat.stopStream"))
    await env.settle()
    writes = ("chat.postMessage", "chat.update", "chat.startStream", "chat.appendStream", "chat.stopStream")
    shown = json.dumps([c.args for c in fake.calls_to(*writes)], ensure_ascii=False)
    assert "Final answer by alpha: 42." in shown
    assert "WHERE THEY DIFFER" not in shown and "towels" not in shown and "joke" not in shown
    buttons = [
        e
        for c in fake.calls_to("chat.postMessage", "chat.update", "chat.stopStream")
        for b in (c.args.get("blocks") or [])
        if b.get("type") == "actions"
        for e in b["elements"]
    ]
    [differ] = [b for b in buttons if b["action_id"] == "council_stage_differ"]
    assert differ["text"]["text"] == DIFFER_TITLE
    await env.action("council_stage_differ", differ["value"])
    await fake.wait_for(lambda: fake.views)
    view = fake.views[0]
    assert view["title"]["text"] == DIFFER_TITLE
    text = json.dumps(view["blocks"], ensure_ascii=False)
    assert "Whether 42 is a joke: beta: it is a joke" in text and "gamma: it is the answer" in text
    assert "beta: towels matter" in text and "Written by alpha" in text
    assert "<@here>" not in text  # model text cannot ping


async def test_discord_has_a_where_they_differ_button(discord_env, llm):  # noqa: F811
    chair_writes_the_section(llm)
    fake = discord_env.fake
    await fake.push_command("council", [{"name": "question", "type": 3, "value": "What is the answer?"}])
    await wait_finished(fake)
    [answer] = answer_messages(fake)
    assert "WHERE THEY DIFFER" not in json.dumps(answer) and "towels" not in json.dumps(answer)
    custom_ids = [c["custom_id"] for row in answer["components"] for c in row["components"]]
    [differ] = [c for c in custom_ids if c.startswith("council:differ:")]
    click = await fake.push_component(int(answer["id"]), differ)
    await fake.wait_for(
        lambda: ephemeral_replies(fake, click.token) and not ephemeral_replies(fake, click.token)[0]["flags"] & 128, 10
    )
    [reply] = ephemeral_replies(fake, click.token)
    assert reply["flags"] & 64  # only the one who clicked sees it
    embeds = json.dumps(reply["embeds"], ensure_ascii=False)
    assert DIFFER_TITLE in embeds and "• Whether 42 is a joke: beta: it is a joke" in embeds
    assert "• beta: towels matter" in embeds and "Written by alpha" in embeds
