"""One set of councils told by every interface, which must all say the same facts: who wrote the
answer (and why, when it was not the chairman), which members failed, how many ballots the
chairman's ranking was read from, the reviews that came after the synthesis began, the mode.

Each case is scripted on the LLM server and asked for real through Slack (the fake Slack), Discord
(the fake Discord), the terminal (`council ask`), the OpenAI-compatible API (the official openai
client) and MCP (the official mcp client, streamable HTTP under `council api`); the API's council,
stored, is then read as the web page (its JSON twin and the HTML) and exported (Markdown, JSON).
The sentences come from core/models/voice.py: a surface that decides one of them on its own
fails here.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx
import openai
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from core.service import CouncilService
from tests import test_discord_adapter, test_slack_adapter
from tests.conftest import MEMBERS, make_settings
from tests.council_api import API_KEY, council_api
from tests.llm_server import ByStage, Fail, Reply, ScriptedLLMServer, WaitFor, council_member, ranking_review
from tests.test_cli import council as council_cli
from tests.test_discord_adapter import answer_messages, council_option, wait_finished
from tests.test_slack_adapter import all_text, results
from tests.web_app import serve_web

slack = test_slack_adapter.env  # the fixtures
discord = test_discord_adapter.env

FORWARD = sorted  # every reviewer ranks the answers it is shown A > B > C: alpha, beta, gamma
BACKWARD = lambda labels: sorted(labels, reverse=True)  # noqa: E731


def _healthy(llm: ScriptedLLMServer, order: Callable = FORWARD, **changes: object) -> None:
    for name in MEMBERS:
        llm.script(name, council_member(f"{name} says: the answer is 42.", order, synthesis=f"Council: 42 ({name})."))
    for name, behaviour in changes.items():
        llm.script(name, behaviour)  # type: ignore[arg-type]


def _chairman(llm: ScriptedLLMServer) -> None:
    _healthy(llm)


def _as_written(llm: ScriptedLLMServer) -> None:
    for name in MEMBERS:  # whichever two seats answer first give the same short answer
        llm.script(name, council_member("42."))


def _stand_in(llm: ScriptedLLMServer) -> None:
    # The chairman (alpha) fails to synthesize; beta, ranked next, stands in.
    _healthy(llm, alpha=ByStage(Reply("alpha says: the answer is 42."), Reply(ranking_review(FORWARD)), Fail(500)))


def _failed_member(llm: ScriptedLLMServer) -> None:
    _healthy(llm, gamma=Fail(401, "invalid api key"))


def _escalated(llm: ScriptedLLMServer) -> None:
    for number, name in enumerate(MEMBERS, 41):  # any two of them disagree
        llm.script(name, council_member(f"{number}.", FORWARD, synthesis="Council: 42."))


def _late_review(llm: ScriptedLLMServer) -> None:
    # Everyone ranks gamma's answer (C) first; gamma, shown only A and B, cannot change that, so
    # the chairman starts without its review, which waits for the chairman's call.
    late = council_member("gamma says: the answer is 42.", BACKWARD, synthesis="Council: 42 (gamma).")
    late.stage2 = WaitFor(lambda call: call.stage == 3, Reply(ranking_review(BACKWARD)))
    _healthy(llm, BACKWARD, gamma=late)


@dataclass(frozen=True)
class Case:
    name: str
    script: Callable[[ScriptedLLMServer], None]
    mode: str = "standard"
    author: str = "chairman"  # chairman, as_written, stand_in
    writer: str = "alpha"  # `as_written`: any of the first two
    failed: tuple[str, ...] = ()
    ballots: str | None = "Ballots read: 3 of 3"
    late: bool = False
    says_also: tuple[str, ...] = field(default=())


CASES = [
    Case("chairman", _chairman),
    Case("as-written", _as_written, mode="auto", author="as_written", writer="", ballots=None),
    Case("stand-in", _stand_in, author="stand_in", writer="beta"),
    Case("failed-member", _failed_member, failed=("gamma",), ballots="Ballots read: 2 of 2"),
    Case("quick", _chairman, mode="quick", ballots=None),
    Case("escalated", _escalated, mode="auto", says_also=("escalated: the first two answers disagreed",)),
    Case("late-review", _late_review, ballots="Ballots read: 2 of 2", late=True),
]


def check(surface: str, text: str, case: Case) -> None:
    """`text` (everything the surface showed of one council) says the case's facts."""
    said = text.lower()
    where = f"{surface} ({case.name})"
    if case.author == "chairman":
        assert f"by the chairman, {case.writer}" in said, where
    elif case.author == "as_written":
        assert re.search(r"as written by (alpha|beta|gamma)", said), where
        assert "the first two answers were the same" in said, where
    else:
        assert f"by {case.writer}, standing in for the chairman" in said, where
        assert "the chairman (alpha) failed" in said, where
    if case.author != "stand_in":  # nothing calls it a failure or a stand-in
        assert "standing in" not in said and "chairman (alpha) failed" not in said, where
        assert "the chairman failed" not in said and "fallback" not in said, where
    for model in case.failed:
        assert f"{model} gave no answer" in said, where
    if not case.failed:
        assert "gave no answer" not in said, where
    if case.ballots is not None:
        assert case.ballots.lower() in said, where
    else:
        assert "ballots read" not in said, where
    late = "1 review arrived after the synthesis began"
    assert (late in said) is case.late, where
    mode = case.mode
    assert re.search(rf"\b{mode} mode\b|\bmode: {mode}\b|\"mode\": \"{mode}\"", said), where
    for words in case.says_also:
        assert words in said, where


# --------------------------------------------------------------------------- each surface


def _question(case: Case) -> str:
    return "What is six times seven?" if case.mode == "standard" else f"{case.mode}: What is six times seven?"


async def via_slack(env, llm: ScriptedLLMServer, case: Case) -> str:
    before = len(results(env.fake))
    await env.command(_question(case))
    await env.fake.wait_for(lambda: len(results(env.fake)) > before)
    await env.settle()
    return "\n".join(all_text(call) for call in results(env.fake)[before:])


async def via_discord(env, llm: ScriptedLLMServer, case: Case) -> str:
    fake = env.fake
    before = {m["id"] for m in answer_messages(fake)}
    await fake.push_command("council", council_option(_question(case)))
    await wait_finished(fake, count=1)
    return "\n".join(
        json.dumps(m["embeds"], ensure_ascii=False) for m in answer_messages(fake) if m["id"] not in before
    )


async def via_terminal(tmp_path, llm: ScriptedLLMServer, case: Case) -> str:
    args = ["ask", "What is six times seven?"] + (["--mode", case.mode] if case.mode != "standard" else [])
    code, out, err = await council_cli(tmp_path, llm, *args, extra_env={"COUNCIL_CHAIRMAN": "alpha"})
    assert code == 0, err
    return out + err  # the result, and the progress


MODELS = {"standard": "llm-council", "quick": "llm-council-quick", "auto": "llm-council-auto"}


async def via_api(api, case: Case) -> tuple[str, str]:
    client = openai.AsyncOpenAI(base_url=api.base_url, api_key=API_KEY, max_retries=0, timeout=60)
    question = [{"role": "user", "content": "What is six times seven?"}]
    completion = await client.chat.completions.create(model=MODELS[case.mode], messages=question)
    message = completion.choices[0].message
    text = "\n".join([message.content or "", message.model_extra["reasoning_content"], json.dumps(completion.metadata)])
    return completion.id.removeprefix("chatcmpl-"), text


async def via_mcp(api, case: Case) -> str:
    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {API_KEY}"})
    async with http, Client(streamable_http_client(f"{api.root}/mcp", http_client=http)) as client:
        answer = await client.call_tool(
            "consult_council",
            {"question": "What is six times seven?", "mode": case.mode},
            progress_callback=on_progress,
        )
    assert not answer.is_error, answer.content
    return json.dumps(answer.structured_content, ensure_ascii=False) + "\n" + "\n".join(progress)


def _visible(page: str) -> str:
    """An HTML page's text as a reader sees it (no scripts, no tags)."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


async def stored_surfaces(service: CouncilService, council_id: str) -> dict[str, str]:
    """The stored council as the web page (JSON twin and HTML) and as both exports."""
    async with serve_web(service) as url, httpx.AsyncClient(base_url=url, timeout=20) as web:
        twin = (await web.get(f"/c/{council_id}", headers={"Accept": "application/json"})).json()
        page = (await web.get(f"/c/{council_id}")).text
    return {
        "web JSON": json.dumps(twin["told"], ensure_ascii=False),
        "web HTML": _visible(page),
        "Markdown export": await service.queries.export(council_id, "markdown"),
        "JSON export": await service.queries.export(council_id, "json"),
    }


# --------------------------------------------------------------------------- the table


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_every_interface_says_the_same_facts(case, llm, tmp_path, slack, discord):
    told: dict[str, str] = {}

    def fresh() -> None:  # each run gets the script anew (WaitFor looks at the requests so far)
        llm.requests.clear()
        case.script(llm)

    fresh()
    told["Slack"] = await via_slack(slack, llm, case)
    fresh()
    told["Discord"] = await via_discord(discord, llm, case)
    fresh()
    told["terminal"] = await via_terminal(tmp_path, llm, case)
    async with council_api(llm, tmp_path) as api:
        fresh()
        council_id, told["API"] = await via_api(api, case)
        fresh()
        told["MCP"] = await via_mcp(api, case)
    settings = make_settings(llm, tmp_path, DATABASE_URL=f"sqlite:///{tmp_path}/api.db")
    service = await CouncilService.open(settings)
    try:
        told |= await stored_surfaces(service, council_id)
    finally:
        await service.aclose()
    for surface, text in told.items():
        check(surface, text, case)


def _slow_chairman(llm: ScriptedLLMServer) -> None:
    llm.requests.clear()
    _healthy(llm)
    slowly = "Council: " + "slowly " * 80
    llm.script("alpha", council_member("alpha says 42.", FORWARD, synthesis=slowly, token_delay_s=0.05))


def _writing(llm: ScriptedLLMServer) -> bool:
    return bool(llm.requests_for("alpha", stage=3))


def check_running(surface: str, text: str) -> None:
    """A council whose chairman is writing: the surface says so, and claims no answer yet."""
    said = text.lower()
    assert "stage 3 · chairman synthesis" in said, surface
    assert "by the chairman" not in said and "final answer" not in said, surface


async def test_a_council_still_running_is_told_as_running(llm, tmp_path, slack, discord):
    """While the chairman writes: the chat status messages, the web page (JSON twin and HTML) and
    the API's and MCP's progress say where the council is, and none claims an answer yet."""
    told: dict[str, str] = {}
    _slow_chairman(llm)
    await slack.command("What is six times seven?")
    await slack.fake.wait_for(lambda: _writing(llm) and test_slack_adapter.statuses(slack.fake))
    await asyncio.sleep(1.5)  # a status edit is paced: let one show the chairman writing
    edits = [c for c in slack.fake.calls_to("chat.update", "chat.postMessage") if c.ok]
    told["Slack"] = all_text(edits[-1])
    await slack.fake.wait_for(lambda: results(slack.fake))
    await slack.settle()

    _slow_chairman(llm)
    await discord.fake.push_command("council", council_option("What is six times seven?"))
    await discord.fake.wait_for(lambda: _writing(llm), 20)
    await asyncio.sleep(1.5)
    status = [m for m in discord.fake.messages.values() if m["content"].startswith("🏛️ **Council**")]
    told["Discord"] = status[-1]["content"]
    await wait_finished(discord.fake)

    _slow_chairman(llm)
    run = await slack.service.start_council("What is six times seven?", test_slack_adapter.ORIGIN)
    async with serve_web(slack.service) as url, httpx.AsyncClient(base_url=url, timeout=20) as web:
        await slack.fake.wait_for(lambda: _writing(llm), 20)
        twin = (await web.get(f"/c/{run.council_id}", headers={"Accept": "application/json"})).json()
        page = _visible((await web.get(f"/c/{run.council_id}")).text)
    assert twin["running"] is True and twin["request"]["config"]["mode"] == "standard"
    assert "The council is deliberating" in page and "Final answer" not in page
    await run.wait()

    async with council_api(llm, tmp_path) as api:
        _slow_chairman(llm)
        client = openai.AsyncOpenAI(base_url=api.base_url, api_key=API_KEY, max_retries=0, timeout=60)
        question = [{"role": "user", "content": "What is six times seven?"}]
        stream = await client.chat.completions.create(model="llm-council", messages=question, stream=True)
        reasoning = ""
        async for chunk in stream:
            delta = chunk.choices[0].delta if chunk.choices else None
            if delta is not None and delta.content:  # the chairman's first words: where is the council now?
                told["API"] = reasoning
                break
            reasoning += ((delta.model_extra or {}).get("reasoning_content") or "") if delta is not None else ""
        await stream.close()

        _slow_chairman(llm)
        progress: list[str] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append(message or "")

        http = create_mcp_http_client(headers={"Authorization": f"Bearer {API_KEY}"})
        async with http, Client(streamable_http_client(f"{api.root}/mcp", http_client=http)) as mcp:
            call = asyncio.create_task(
                mcp.call_tool("consult_council", {"question": "Six times seven?"}, progress_callback=on_progress)
            )
            await slack.fake.wait_for(lambda: _writing(llm) or call.done(), 20)
            await asyncio.sleep(0.2)
            told["MCP"] = "\n".join(progress)
            assert not (await call).is_error
    for surface, text in told.items():
        check_running(surface, text)
