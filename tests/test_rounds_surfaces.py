"""One refine council with a lens, and one Self-MoA council, through every surface's renderer: each says
the round line, the lens beside its answer, the first answer and the revision, and the samples line."""

from __future__ import annotations

import json

import discord
import pytest

from bot.api.mcp_tools import _answer
from bot.api.openai_types import ApiError, ChatRequest, council_metadata
from bot.api.transcript import CouncilTranscript
from bot.discord import render as discord_render
from bot.progress import CouncilProgress
from bot.render_text import progress_lines
from bot.slack import modals
from bot.slack import render as slack_render
from bot.slack.stream_render import stream_final_blocks
from bot.web.live import sse
from core.engine.council import run_council
from core.models import CouncilFinished, CouncilRequest, Lens, RoundFinished
from core.records.export import to_markdown
from tests import test_council
from tests.test_council import CHAIR, M1, M2, config, script
from tests.test_rounds import REVISED, WRONG, refine, scripts

server, router = test_council.server, test_council.router  # the fixtures

ROUND = f"Round 1: {M2} moved toward {M1}"
LENS = "lens: skeptic"
SAMPLES = f"3 samples of {M1}, aggregated by {CHAIR}"


async def council(router, council_config):
    events = []
    async for event in run_council(CouncilRequest(question="Capital of Australia?", config=council_config), router):
        events.append(event)
    assert isinstance(events[-1], CouncilFinished)
    return events, events[-1].result


def slack_text(messages) -> str:
    return json.dumps(messages, ensure_ascii=False)


def discord_text(messages) -> str:
    embeds = [e for m in messages for e in m.get("embeds", [])]
    return json.dumps([e.to_dict() for e in embeds if isinstance(e, discord.Embed)], ensure_ascii=False)


async def test_every_surface_says_the_rounds_and_the_lens(server, router):
    script(server, scripts())
    events, result = await council(router, refine(rounds=1, lenses={M1: Lens(persona="p", preset="skeptic")}))
    slack = slack_text(slack_render.result_messages(result)) + slack_text(stream_final_blocks(result))
    assert ROUND in slack and LENS in slack
    answers = slack_text(modals.stage_modal(result, "answers"))
    assert LENS in answers and "after the revision rounds" in answers and "first answer" in answers
    assert REVISED in answers and WRONG in answers
    chat = discord_text(discord_render.result_messages(result))
    assert ROUND in chat and LENS in chat
    stage = json.dumps([e.to_dict() for e in discord_render.answers_embeds(result)], ensure_ascii=False)
    assert LENS in stage and "after the revision rounds" in stage and REVISED in stage and WRONG in stage
    markdown = to_markdown(result)
    assert ROUND in markdown and LENS in markdown
    metadata = council_metadata(result)
    assert metadata["rounds"][0][1] == {"member": M2, "moved": True, "toward": [M1]}
    assert metadata["lenses"][M1]["preset"] == "skeptic"
    assert any(ROUND in line for line in _answer(result, "answer").deliberation)
    transcript = CouncilTranscript()
    progress = CouncilProgress(result.council_id)
    for event in events:
        transcript.on_event(event)
        progress.apply(event)
    assert ROUND in transcript.reasoning and f"{M2} moved toward {M1}: “" in transcript.reasoning
    assert any(ROUND in line for line in progress_lines(progress))
    [finished] = [e for e in events if isinstance(e, RoundFinished)]
    assert ROUND in json.loads((await sse(1, finished)).split("data: ", 1)[1])["html"]  # the web page's live stage 1


async def test_every_surface_says_the_self_moa_samples(server, router):
    script(server, scripts())
    _, result = await council(router, config(members=[M1], mode="self-moa", samples=3, sample_temperature=0.7))
    for text in (
        slack_text(slack_render.result_messages(result)),
        discord_text(discord_render.result_messages(result)),
        to_markdown(result),
        json.dumps(council_metadata(result)),
        " ".join(_answer(result, "answer").deliberation),
    ):
        assert SAMPLES in text


def test_the_api_reads_lenses_from_metadata():
    body = {"model": "llm-council", "messages": [{"role": "user", "content": "Q?"}]}
    chat = ChatRequest.from_json(body | {"metadata": {"lenses": json.dumps({M1: "skeptic"})}})
    assert chat.lenses() == {M1: "skeptic"}
    assert ChatRequest.from_json(body | {"metadata": {"lenses": {M2: "a persona"}}}).lenses() == {M2: "a persona"}
    with pytest.raises(ApiError, match=r"metadata\.lenses"):
        ChatRequest.from_json(body | {"metadata": {"lenses": "[1]"}}).lenses()
