"""COUNCIL_PUBLIC_URL: every place that shows a council's answer names its page in the browser app
(<COUNCIL_PUBLIC_URL>/c/<id>): Slack and Discord results, `council ask`'s Details line and
`council show`, the API's metadata, MCP's consult_council; and `council api` with COUNCIL_WEB=on
serves the browser app beside the API on its one port."""

from __future__ import annotations

import re
import sys

import httpx
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from bot.api.server import build_asgi
from bot.discord.surface import DiscordSurface
from bot.slack.surface import slack_surface
from bot.web.app import create_web_app
from core.service import CouncilService
from tests.conftest import make_settings
from tests.council_api import ROOT, council_env
from tests.factories import make_result
from tests.test_cli import council as run_council_command
from tests.test_web import council

PUBLIC = "https://council.example.com/"


def test_slack_and_discord_results_link_the_councils_page_when_a_public_url_is_set(llm, tmp_path):
    result = make_result(council_id="c0ffee0000000001")
    linked = make_settings(llm, tmp_path, COUNCIL_PUBLIC_URL=PUBLIC, SLACK_BOT_TOKEN="xoxb-test")
    plain = make_settings(llm, tmp_path, SLACK_BOT_TOKEN="xoxb-test")
    url = "https://council.example.com/c/c0ffee0000000001"
    [message] = slack_surface(linked).render.result_messages(result)
    footers = [b["elements"][0]["text"] for b in message["blocks"] if b["type"] == "context"]
    assert any(f"<{url}|open in the browser>" in text for text in footers)
    [message] = slack_surface(plain).render.result_messages(result)
    assert "open in the browser" not in str(message)
    [message] = DiscordSurface(client=None, settings=linked).render.result_messages(result)  # type: ignore[arg-type]
    assert message["embeds"][0].url == url
    [message] = DiscordSurface(client=None, settings=plain).render.result_messages(result)  # type: ignore[arg-type]
    assert message["embeds"][0].url is None


async def test_the_terminals_details_line_and_council_show_carry_the_link(tmp_path, llm):
    env = {"COUNCIL_PUBLIC_URL": PUBLIC}
    code, out, err = await run_council_command(tmp_path, llm, "ask", "What is six times seven?", extra_env=env)
    assert code == 0, err
    details = next(line for line in out.splitlines() if line.startswith("Details: "))
    council_id = re.search(r" show ([0-9a-f]{16}) · ", details)[1]
    assert details.endswith(f" · https://council.example.com/c/{council_id}")
    code, out, err = await run_council_command(tmp_path, llm, "show", council_id, extra_env=env)
    assert code == 0 and f"In the browser: https://council.example.com/c/{council_id}" in out, err


async def test_council_api_with_council_web_serves_both_and_its_metadata_links_the_page(llm, tmp_path):
    settings = make_settings(llm, tmp_path, COUNCIL_PUBLIC_URL=PUBLIC, COUNCIL_WEB="on")
    async with await CouncilService.open(settings) as service:
        await service.storage.save_result(council("c0ffee0000000001"))
        app = build_asgi(service, "127.0.0.1")
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=30) as client:
            home = await client.get("/")
            assert home.status_code == 200 and "What is the capital of France?" in home.text
            assert "script-src 'self'" in home.headers["content-security-policy"]
            asked = await client.post(
                "/v1/chat/completions",
                json={"model": "llm-council", "messages": [{"role": "user", "content": "What is six times seven?"}]},
            )
            assert asked.status_code == 200, asked.text
            metadata = asked.json()["metadata"]
            assert metadata["url"] == f"https://council.example.com/c/{metadata['council_id']}"
            page = await client.get(f"/c/{metadata['council_id']}", headers={"Accept": "application/json"})
            assert page.json()["council"]["request"]["question"] == "What is six times seven?"
            assert (await client.get("/v1/models")).json()["object"] == "list"  # the API's own paths stay its
            form = await client.post("/v1/chat/completions", data={"question": "x"})
            assert form.status_code == 415  # the API's cross-site guard still refuses non-JSON posts


async def test_mcp_consult_council_links_the_councils_page(llm, tmp_path):
    env = {**council_env(llm, tmp_path), "COUNCIL_PUBLIC_URL": PUBLIC}
    params = StdioServerParameters(command=sys.executable, args=["-m", "bot.cli", "mcp"], env=env, cwd=str(ROOT))
    async with Client(params) as client:
        result = await client.call_tool("consult_council", {"question": "What is six times seven?"})
    answer = result.structured_content
    assert not result.is_error and answer["url"] == f"https://council.example.com/c/{answer['council_id']}"


async def test_council_web_refuses_to_serve_everyone_beyond_loopback_without_sign_in_or_keys(tmp_path, llm):
    code, _, err = await run_council_command(tmp_path, llm, "web", "--host", "0.0.0.0", "--port", "0")
    assert code != 0 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("council: Refusing to serve the browser app on 0.0.0.0 to anyone")


async def test_behind_a_proxy_the_public_name_is_answered_and_a_rebound_name_is_not(llm, tmp_path):
    settings = make_settings(llm, tmp_path, COUNCIL_PUBLIC_URL=PUBLIC)
    async with await CouncilService.open(settings) as service:
        transport = httpx.ASGITransport(app=create_web_app(service, "127.0.0.1"))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            assert (await client.get("/", headers={"Host": "council.example.com"})).status_code == 200
            assert (await client.get("/", headers={"Host": "127.0.0.1:8080"})).status_code == 200
            assert (await client.get("/", headers={"Host": "evil.example"})).status_code == 421
