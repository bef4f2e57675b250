"""The table's last case, a council still running (tests/one_voice_cases.py): while the chairman is
asked for the answer, and holds it until the test has looked, every interface that follows a
council live says where it is (Stage 3 · chairman synthesis) and none claims an answer yet.

Every wait is on what the surface has shown (the fake's messages, the process's lines, the
stream's chunks, the progress notifications); each council's chairman answers only once its
surface has been read, so no surface can be read too late to see its council running. The
surfaces ask at once, each with a question of its own (a council is known by it)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import httpx

from tests.council_api import RunningApi, council_api
from tests.discord_fake import FakeDiscord
from tests.llm_server import Behaviour, Reply, ScriptedLLMServer, WaitFor
from tests.one_voice_cases import (
    CHAIRMAN,
    GRACE,
    RUNNING,
    RUNNING_EXCLUDED,
    SURFACES,
    answer_of,
    asked_on,
    check_running,
    healthy,
    in_order,
    member,
    synthesis_by,
    where_asked,
)
from tests.one_voice_surfaces import mcp_client, mcp_http, openai_client, progress_into, web_page
from tests.test_cli import cli_env
from tests.test_discord_adapter import council_option, discord_env, wait_finished
from tests.test_slack_adapter import SlackEnv, all_text, results, slack_env, statuses
from tests.web_app import serve_web


class HeldChairman(Behaviour):
    """The chairman's answer, held in each council until the test releases the surface that asked it."""

    def __init__(self) -> None:
        self.released: set[str] = set()

    async def respond(self, request, call, server):
        asked = where_asked(call)
        held = WaitFor(lambda _: asked in self.released, Reply(synthesis_by(CHAIRMAN)), timeout_s=60)
        return await held.respond(request, call, server)

    def release(self, where: str) -> None:
        self.released.add(where)


def _slack_status(env: SlackEnv) -> str:
    """The status message as last written (posted, then edited)."""
    [status] = statuses(env.fake)
    ts = status.response["ts"]
    edits = [c for c in env.fake.calls_to("chat.update") if c.ok and c.args.get("ts") == ts]
    return all_text((edits or [status])[-1])


async def slack_and_web(llm: ScriptedLLMServer, tmp_path: Path, held: HeldChairman) -> dict[str, str]:
    """Slack's status message (SLACK_STREAMING=off), and the same council's page on the web."""
    async with slack_env(llm, tmp_path, streaming=True, SLACK_STREAMING="off", **GRACE) as env:
        fake = env.fake
        await env.command(asked_on("slack"))
        await fake.wait_for(lambda: statuses(fake) and RUNNING in _slack_status(env))
        told = {"Slack": _slack_status(env)}
        council_id = statuses(fake)[0].args["blocks"][0]["block_id"].split("-")[2]
        async with serve_web(env.service) as url, httpx.AsyncClient(base_url=url, timeout=20) as web:
            twin, page = await web_page(web, council_id)
        assert twin["request"]["config"]["mode"] == "standard" and "The council is deliberating" in page
        told |= {"web JSON": json.dumps(twin), "web HTML": page}
        held.release("slack")
        await fake.wait_for(lambda: results(fake))
        await env.settle()
    return told


def _discord_status(fake: FakeDiscord) -> str:
    return "\n".join(m["content"] for m in fake.messages.values() if m["content"].startswith("🏛️ **Council**"))


async def discord(llm: ScriptedLLMServer, tmp_path: Path, held: HeldChairman) -> dict[str, str]:
    async with discord_env(llm, tmp_path, **GRACE) as env:
        fake = env.fake
        await fake.push_command("council", council_option(asked_on("discord")))
        await fake.wait_for(lambda: RUNNING in _discord_status(fake))
        shown = _discord_status(fake)
        held.release("discord")
        await wait_finished(fake)
    return {"Discord": shown}


async def terminal(llm: ScriptedLLMServer, tmp_path: Path, held: HeldChairman) -> dict[str, str]:
    """`council ask`'s progress on stderr, read line by line until it says the chairman is writing."""
    env = cli_env(llm, tmp_path, COUNCIL_CHAIRMAN=CHAIRMAN, **GRACE)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "ask", asked_on("terminal"),
        cwd=tmp_path, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stderr is not None
    lines: list[str] = []
    while not lines or RUNNING not in lines[-1]:
        line = await asyncio.wait_for(process.stderr.readline(), 60)
        assert line, f"`council ask` ended before the chairman was asked: {''.join(lines)}"
        lines.append(line.decode())
    held.release("terminal")
    _, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    return {"terminal": "".join(lines)}


async def api_stream(api: RunningApi, held: HeldChairman) -> str:
    """The streamed completion's reasoning until the chairman is asked, before any answer."""
    question = [{"role": "user", "content": asked_on("api")}]
    stream = await openai_client(api).chat.completions.create(model="llm-council", messages=question, stream=True)
    shown, content, told = "", "", ""
    async for chunk in stream:
        delta = chunk.choices[0].delta if chunk.choices else None
        if delta is not None:
            content += delta.content or ""
            shown += (delta.model_extra or {}).get("reasoning_content") or ""
        if RUNNING in shown and not told:
            assert not content, content
            told = shown  # what it had said when the chairman was asked
            held.release("api")
    return told


async def mcp(api: RunningApi, held: HeldChairman) -> str:
    progress: list[str] = []
    async with mcp_http() as http, mcp_client(api, http) as client:
        arguments = {"question": asked_on("mcp")}
        call = asyncio.create_task(
            client.call_tool("consult_council", arguments, progress_callback=progress_into(progress))
        )
        while not any(RUNNING in line for line in progress):
            assert not call.done(), "consult_council ended before the chairman was asked"
            await asyncio.sleep(0.02)  # a condition on the notifications so far, polled
        shown = "\n".join(progress)
        held.release("mcp")
        assert not (await call).is_error
    return shown


async def api_and_mcp(llm: ScriptedLLMServer, tmp_path: Path, held: HeldChairman) -> dict[str, str]:
    async with council_api(llm, tmp_path, **GRACE) as api:
        api_text, mcp_text = await asyncio.gather(api_stream(api, held), mcp(api, held))
    return {"API": api_text, "MCP": mcp_text}


async def test_a_council_still_running_is_told_as_running(llm, tmp_path):
    held = HeldChairman()
    healthy(llm, **{CHAIRMAN: member(answer_of(CHAIRMAN), in_order(), held)})
    for name in ("slack", "discord"):  # a database each: the chat apps count their event ids
        (tmp_path / name).mkdir()
    asked = await asyncio.gather(
        slack_and_web(llm, tmp_path / "slack", held),
        discord(llm, tmp_path / "discord", held),
        terminal(llm, tmp_path, held),
        api_and_mcp(llm, tmp_path, held),
    )
    told = {surface: text for said in asked for surface, text in said.items()}
    assert set(told) == {s for s in SURFACES if s not in RUNNING_EXCLUDED}
    for surface, text in told.items():
        check_running(surface, text)
