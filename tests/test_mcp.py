"""The council as MCP tools, driven by the official MCP SDK's own client: `council mcp` on stdio as a
subprocess, and streamable HTTP under `council api`."""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import sys
import time

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from core.models import CouncilStatus
from core.storage import Storage
from tests.conftest import MEMBERS
from tests.council_api import API_KEY, OTHER_KEY, ROOT, council_api, council_env
from tests.llm_server import Hang

TOOLS = {"consult_council", "council_history", "council_show"}


async def _consult_and_browse(client: Client) -> str:
    assert {tool.name for tool in (await client.list_tools()).tools} >= TOOLS
    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    result = await client.call_tool(
        "consult_council", {"question": "What is six times seven?"}, progress_callback=on_progress
    )
    assert not result.is_error, result.content
    answer = result.structured_content
    assert answer["answer"] == "Final answer by alpha: 42." and answer["status"] == "ok" and answer["by_chairman"]
    assert [r["position"] for r in answer["ranking"]] == [1, 2, 3]
    assert {r["model"] for r in answer["ranking"]} == set(MEMBERS)
    assert 0 <= answer["agreement_w"] <= 1
    assert any("Stage 1" in line for line in progress) and any("Aggregate ranking" in line for line in progress)

    history = (await client.call_tool("council_history", {"limit": 5})).structured_content
    assert answer["council_id"] in [c["council_id"] for c in history["councils"]]
    shown = await client.call_tool("council_show", {"council_id": answer["council_id"]})
    assert not shown.is_error and "Aggregate ranking" in shown.content[0].text
    return answer["council_id"]


async def test_stdio_server_consults_the_council(llm, tmp_path):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "bot.cli", "mcp"], env=council_env(llm, tmp_path), cwd=str(ROOT)
    )
    async with Client(params) as client:
        assert client.server_info is not None and client.server_info.name == "llm-council"
        assert client.server_info.version == importlib.metadata.version("llm-council-bot")
        await _consult_and_browse(client)
        refused = await client.call_tool("consult_council", {"question": "Hi?", "members": ["alpha", "no-such-model"]})
        assert refused.is_error and "no-such-model" in refused.content[0].text
        unknown_mode = await client.call_tool("consult_council", {"question": "Hi?", "mode": "turbo"})
        assert unknown_mode.is_error and "standard" in unknown_mode.content[0].text


async def test_members_and_chairman_can_be_chosen_per_call(llm, tmp_path):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "bot.cli", "mcp"], env=council_env(llm, tmp_path), cwd=str(ROOT)
    )
    async with Client(params) as client:
        result = await client.call_tool(
            "consult_council", {"question": "Six times seven?", "members": ["beta", "gamma"], "chairman": "gamma"}
        )
    assert result.structured_content["answer"] == "Final answer by gamma: 42."
    assert {r["model"] for r in result.structured_content["ranking"]} == {"beta", "gamma"}
    assert not llm.requests_for("alpha")


async def test_streamable_http_under_the_api_needs_a_key_and_scopes_history(llm, tmp_path):
    async with council_api(llm, tmp_path) as api:
        url = f"{api.root}/mcp"
        alice = create_mcp_http_client(headers={"Authorization": f"Bearer {API_KEY}"})
        async with alice, Client(streamable_http_client(url, http_client=alice)) as client:
            assert client.server_info is not None and client.server_info.version
            council_id = await _consult_and_browse(client)

        bob = create_mcp_http_client(headers={"Authorization": f"Bearer {OTHER_KEY}"})
        async with bob, Client(streamable_http_client(url, http_client=bob)) as client:
            history = (await client.call_tool("council_history", {})).structured_content
            assert history["councils"] == []
            hidden = await client.call_tool("council_show", {"council_id": council_id})
            assert hidden.is_error and "No council" in hidden.content[0].text

        anonymous = create_mcp_http_client()
        with pytest.raises(Exception):  # noqa: B017 - the SDK surfaces the 401 as its own error type
            async with anonymous, Client(streamable_http_client(url, http_client=anonymous)) as client:
                await client.list_tools()
        assert not llm.requests_for(stage=1)[len(MEMBERS) :]


async def test_a_cancelled_tool_call_stops_its_council(llm, tmp_path):
    for name in MEMBERS:
        llm.script(name, Hang())
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "bot.cli", "mcp"], env=council_env(llm, tmp_path), cwd=str(ROOT)
    )
    async with Client(params) as client:
        call = asyncio.create_task(client.call_tool("consult_council", {"question": "Will this be stopped?"}))
        deadline = time.perf_counter() + 15
        while len(llm.requests) < len(MEMBERS):
            assert time.perf_counter() < deadline, "the council never asked its members"
            await asyncio.sleep(0.02)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        cancelled_at = time.perf_counter()
        storage = await Storage.open(str(tmp_path / "api.db"))
        try:
            while True:
                summaries = await storage.councils.history(limit=1)
                if summaries and summaries[0].status is CouncilStatus.CANCELLED:
                    break
                assert time.perf_counter() - cancelled_at < 10, "council still running 10 s after the cancel"
                await asyncio.sleep(0.05)
        finally:
            await storage.close()
    assert len(llm.requests) == len(MEMBERS)


async def test_auto_mode_over_stdio_says_whether_it_escalated(llm, tmp_path):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "bot.cli", "mcp"], env=council_env(llm, tmp_path), cwd=str(ROOT)
    )
    async with Client(params) as client:
        result = await client.call_tool("consult_council", {"question": "Six times seven?", "mode": "auto"})
    answer = result.structured_content
    assert not result.is_error and answer["escalated"] is True  # "alpha says: …" and "beta says: …" differ
    assert any("escalated: the first two answers disagreed" in n for n in answer["notices"])
    assert len(llm.requests) == 7


async def test_a_long_answer_is_returned_whole(llm, tmp_path):
    """The answer the chat apps cut (tests/long_answer.py): the tool's result holds all of it, in
    the structured answer and in the text content (its JSON), its code block whole, no cut note."""
    from tests.llm_server import ByStage, Reply, council_member
    from tests.long_answer import CODE_AT, LONG_ANSWER

    llm.script("alpha", ByStage(Reply("alpha answers."), council_member("x").stage2, Reply(LONG_ANSWER)))
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "bot.cli", "mcp"], env=council_env(llm, tmp_path), cwd=str(ROOT)
    )
    async with Client(params) as client:
        result = await client.call_tool("consult_council", {"question": "Write a long report"})
    assert not result.is_error, result.content
    code = LONG_ANSWER[CODE_AT : LONG_ANSWER.index("```", CODE_AT + 3) + 3]
    for answer in (result.structured_content["answer"], json.loads(result.content[0].text)["answer"]):
        assert answer.strip() == LONG_ANSWER.strip() and code in answer and "cut here" not in answer
