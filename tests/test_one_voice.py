"""One set of councils told by every interface, which must all say the same facts: who wrote the
answer (and why, when it was not simply the chairman), which members failed, how many ballots the
chairman's ranking was read from, the reviews that came after the synthesis began, the mode.

Each case (tests/one_voice_cases.py) is scripted on the LLM server and asked for real through
Slack (the fake Slack, streamed and with SLACK_STREAMING=off), Discord (the fake Discord), the
terminal (`council ask`), the OpenAI-compatible API (the openai client) and MCP (the mcp client,
streamable HTTP under `council api`); the Slack council, stored, is then read from the real web
server (its JSON twin and its HTML) and exported (Markdown, JSON). The surfaces ask at once, each
with a question of its own (a council is known by it). The sentences come from
core/models/voice.py: a surface that decides one of them on its own fails here.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.slack.stream_render import opening_text
from core.models.voice import Opening
from tests.council_api import council_api
from tests.factories import make_result
from tests.one_voice_cases import CASES, EXCLUDED, GRACE, SURFACES, Case, check
from tests.one_voice_surfaces import stored, via_api, via_discord, via_mcp, via_slack, via_terminal
from tests.test_discord_adapter import discord_env
from tests.test_slack_adapter import slack_env


async def chats(llm, tmp_path: Path, case: Case) -> dict[str, str]:
    """Slack with SLACK_STREAMING=off (then its council's page and exports), Slack streamed, Discord."""
    told: dict[str, str] = {}
    settings = GRACE | case.settings
    for name in ("slack", "streamed", "discord"):  # a database each: the chat apps count their event ids
        (tmp_path / name).mkdir()

    async def slack(off: bool) -> None:
        where, more = ("slack", {"SLACK_STREAMING": "off"}) if off else ("streamed", {})
        async with slack_env(llm, tmp_path / where, streaming=True, **settings, **more) as env:
            told["Slack" if off else "Slack streamed"], council_id = await via_slack(env, case, where)
            if off:
                told.update(await stored(env.service, council_id))

    async def discord() -> None:
        async with discord_env(llm, tmp_path / "discord", **settings) as env:
            told["Discord"] = await via_discord(env.fake, case)

    await asyncio.gather(slack(off=True), slack(off=False), discord())
    return told


async def api_and_mcp(llm, tmp_path: Path, case: Case) -> dict[str, str]:
    async with council_api(llm, tmp_path, **(GRACE | case.settings)) as api:
        api_text, mcp_text = await asyncio.gather(via_api(api, case), via_mcp(api, case))
    return {"API": api_text, "MCP": mcp_text}


async def terminal(llm, tmp_path: Path, case: Case) -> dict[str, str]:
    return {"terminal": await via_terminal(tmp_path, llm, case)}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_every_interface_says_the_same_facts(case: Case, llm, tmp_path):
    case.script(llm)  # every surface asks at once: each council is known by its question
    told: dict[str, str] = {}
    for said in await asyncio.gather(
        chats(llm, tmp_path, case), api_and_mcp(llm, tmp_path, case), terminal(llm, tmp_path, case)
    ):
        told.update(said)
    assert set(told) == {s for s in SURFACES if (case.name, s) not in EXCLUDED}
    for surface, text in told.items():
        check(surface, text, case)


def test_a_streamed_stand_in_says_why_the_chairman_failed_once_it_has_finished():
    """A streamed answer opens with who writes instead; the note with the chairman's cause is still
    to be said under it (in the table, a stand-in whose first words stream before the result)."""
    result = make_result()
    assert result.synthesis is not None and result.synthesis.note is not None
    result.notices.append(result.synthesis.note)
    opened = Opening.of_result(result)
    said = opening_text(opened) or ""
    assert "The chairman m-a failed; m-b wrote this answer instead." in said and "timeout" not in said
    assert result.synthesis.note in opened.unsaid(result)
