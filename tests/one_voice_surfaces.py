"""How tests/test_one_voice.py asks each interface for a council, through its real path: Slack and
Discord through their adapters against the fakes, the terminal as `council ask`, the API with the
official openai client and MCP with the official mcp client (both under `council api`), the web
page from the real server (its JSON twin and its HTML) and the exports through the service.

Each returns everything the surface showed of one council as one text, for one_voice_cases.check."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import openai
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from core.service import CouncilService
from tests.council_api import API_KEY, RunningApi
from tests.discord_fake import FakeDiscord
from tests.one_voice_cases import CHAIRMAN, GRACE, Case, asked_on
from tests.slack_fake import ApiCall
from tests.test_cli import council as council_cli
from tests.test_discord_adapter import answer_messages, council_option, wait_finished
from tests.test_slack_adapter import SlackEnv, all_text, results, streamed
from tests.web_app import serve_web

Progress = Callable[[float, float | None, str | None], Awaitable[None]]
MODELS = {"standard": "llm-council", "quick": "llm-council-quick", "auto": "llm-council-auto"}


def command(case: Case, where: str) -> str:
    """The chat command's text: `auto: ...` picks the mode."""
    return asked_on(where) if case.mode == "standard" else f"{case.mode}: {asked_on(where)}"


def _answers(env: SlackEnv) -> list[ApiCall]:
    """The council's answer: a posted answer message, or the end of a streamed one."""
    return results(env.fake) + [stop for _, stop, _ in streamed(env.fake)]


async def via_slack(env: SlackEnv, case: Case, where: str) -> tuple[str, str]:
    """The answer (posted or streamed) and, when it has one, the Ranking modal; and the council's id."""
    fake = env.fake
    await env.command(command(case, where))
    await fake.wait_for(lambda: _answers(env))
    await env.settle()
    [answer] = _answers(env)
    blocks = answer.args.get("blocks") or []
    council_id = next(b["block_id"] for b in blocks if b.get("block_id", "").startswith("council-a-")).split("-")[2]
    told = [all_text(answer)] + [json.dumps(m, ensure_ascii=False) for _, _, m in streamed(fake)]
    buttons = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
    ranking = [e for e in buttons if e.get("action_id") == "council_stage_ranking"]
    if ranking:
        before = len(fake.views)
        await env.action("council_stage_ranking", ranking[0]["value"], thread_ts=answer.args.get("thread_ts"))
        await fake.wait_for(lambda: len(fake.views) > before)
        told.append(json.dumps(fake.views[-1], ensure_ascii=False))
    return "\n".join(told), council_id


async def via_discord(fake: FakeDiscord, case: Case) -> str:
    await fake.push_command("council", council_option(command(case, "discord")))
    await wait_finished(fake)
    return "\n".join(json.dumps(m["embeds"], ensure_ascii=False) for m in answer_messages(fake))


async def via_terminal(tmp_path, llm, case: Case) -> str:
    args = ["ask", asked_on("terminal")] + (["--mode", case.mode] if case.mode != "standard" else [])
    code, out, err = await council_cli(
        tmp_path, llm, *args, extra_env={"COUNCIL_CHAIRMAN": CHAIRMAN, **GRACE, **case.settings}
    )
    assert code == 0, err
    return out + err  # the result, and the progress


def openai_client(api: RunningApi) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=api.base_url, api_key=API_KEY, max_retries=0, timeout=60)


async def via_api(api: RunningApi, case: Case) -> str:
    question = [{"role": "user", "content": asked_on("api")}]
    completion = await openai_client(api).chat.completions.create(model=MODELS[case.mode], messages=question)
    message = completion.choices[0].message
    extra = message.model_extra or {}
    return "\n".join([message.content or "", extra.get("reasoning_content", ""), json.dumps(completion.metadata)])


def mcp_client(api: RunningApi, http: httpx.AsyncClient) -> Client:
    return Client(streamable_http_client(f"{api.root}/mcp", http_client=http))


def mcp_http() -> httpx.AsyncClient:
    return create_mcp_http_client(headers={"Authorization": f"Bearer {API_KEY}"})


def progress_into(lines: list[str]) -> Progress:
    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        lines.append(message or "")

    return on_progress


async def via_mcp(api: RunningApi, case: Case) -> str:
    progress: list[str] = []
    async with mcp_http() as http, mcp_client(api, http) as client:
        answer = await client.call_tool(
            "consult_council",
            {"question": asked_on("mcp"), "mode": case.mode},
            progress_callback=progress_into(progress),
        )
    assert not answer.is_error, answer.content
    return json.dumps(answer.structured_content, ensure_ascii=False) + "\n" + "\n".join(progress)


def visible(page: str) -> str:
    """An HTML page's text as a reader sees it (no scripts, no styles, no tags)."""
    page = re.sub(r"<(script|style|template)\b.*?</\1>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


async def web_page(web: httpx.AsyncClient, council_id: str) -> tuple[dict[str, Any], str]:
    """The council's page: its JSON twin and the HTML's visible text."""
    twin = await web.get(f"/c/{council_id}", headers={"Accept": "application/json"})
    page = await web.get(f"/c/{council_id}")
    assert twin.status_code == page.status_code == 200, (twin.status_code, page.status_code)
    return twin.json(), visible(page.text)


async def stored(service: CouncilService, council_id: str) -> dict[str, str]:
    """The stored council as the web page (JSON twin and HTML, from the real server) and both exports."""
    async with serve_web(service) as url, httpx.AsyncClient(base_url=url, timeout=20) as web:
        twin, page = await web_page(web, council_id)
    return {
        "web JSON": json.dumps(twin["told"], ensure_ascii=False),
        "web HTML": page,
        "Markdown export": await service.queries.export(council_id, "markdown"),
        "JSON export": await service.queries.export(council_id, "json"),
    }
