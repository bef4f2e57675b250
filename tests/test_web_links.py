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


SECRET = "web-secret-for-share-links-0123456789"


async def test_share_links_open_that_one_council_read_only_and_nothing_else(llm, tmp_path):
    """COUNCIL_SHARE_LINKS: the link every surface hands out opens its council for someone who is
    not signed in; a tampered token, another council's id, the rest of the app and a rotated
    secret are all shut. Nothing else of the app opens with it."""
    signed_in_only = {"COUNCIL_API_KEYS": "alice:sk-alice"}  # a closed app: nobody is the operator
    settings = make_settings(
        llm,
        tmp_path,
        COUNCIL_PUBLIC_URL=PUBLIC,
        COUNCIL_SHARE_LINKS="on",
        COUNCIL_WEB_SECRET=SECRET,
        SLACK_BOT_TOKEN="xoxb-test",
        **signed_in_only,
    )
    link = settings.council_url("c0ffee0000000001")
    assert link is not None and link.startswith("https://council.example.com/c/c0ffee0000000001?share=")
    token = link.split("share=", 1)[1]
    [message] = slack_surface(settings).render.result_messages(make_result(council_id="c0ffee0000000001"))
    assert link.replace("|", "%7C") in str(message)  # the link Slack shows is the shared one
    async with await CouncilService.open(settings) as service:
        await service.storage.save_result(council("c0ffee0000000001", answer="Paris, shared."))
        await service.storage.save_result(council("b0b0000000000001", answer="Not for you."))
        app = create_web_app(service, "127.0.0.1")
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
            page = await client.get(f"/c/c0ffee0000000001?share={token}")
            assert page.status_code == 200 and "Paris, shared." in page.text
            assert 'action="/c/c0ffee0000000001/stop"' not in page.text and "export.md" not in page.text
            refused = [
                await client.get(f"/c/b0b0000000000001?share={token}"),  # another council's id
                await client.get(f"/c/c0ffee0000000001?share={token[:-2]}xx"),  # tampered
                await client.get(f"/c/c0ffee?share={token}"),  # a start of the id
                await client.get("/c/ffff000000000001?share=" + token),  # no such council
            ]
            assert [r.status_code for r in refused] == [404] * 4
            assert len({re.sub("[0-9a-f]{6,16}", "", r.text) for r in refused}) == 1  # the same 404
            # It signs nobody in: with the page's cookie, the rest of the app is still shut.
            for path in ("/", "/c/c0ffee0000000001", "/c/c0ffee0000000001/export.md", "/leaderboard"):
                shut = await client.get(f"{path}?share={token}" if path == "/" else path)
                assert shut.status_code in (303, 401), path
    rotated = make_settings(
        llm,
        tmp_path,
        COUNCIL_PUBLIC_URL=PUBLIC,
        COUNCIL_SHARE_LINKS="on",
        COUNCIL_WEB_SECRET="rotated",
        **signed_in_only,
    )
    async with await CouncilService.open(rotated) as service:
        app = create_web_app(service, "127.0.0.1")
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
            assert (await client.get(f"/c/c0ffee0000000001?share={token}")).status_code == 404


def test_share_links_need_the_web_secret(llm, tmp_path):
    from core.errors import ConfigurationError

    try:
        make_settings(llm, tmp_path, COUNCIL_PUBLIC_URL=PUBLIC, COUNCIL_SHARE_LINKS="on")
    except (ConfigurationError, ValueError) as exc:
        assert "COUNCIL_WEB_SECRET" in str(exc)
    else:
        raise AssertionError("share links without a secret were accepted")
    plain = make_settings(llm, tmp_path, COUNCIL_PUBLIC_URL=PUBLIC, COUNCIL_WEB_SECRET=SECRET)
    assert plain.council_url("c0ffee0000000001") == "https://council.example.com/c/c0ffee0000000001"


async def test_the_api_answer_ends_with_the_councils_link_when_asked(llm, tmp_path):
    """COUNCIL_API_LINK: the official openai client gets the link as the answer's last line,
    streamed or not (Open WebUI drops `metadata.url`)."""
    import openai

    settings = make_settings(llm, tmp_path, COUNCIL_PUBLIC_URL=PUBLIC, COUNCIL_API_LINK="on")
    async with await CouncilService.open(settings) as service:
        app = build_asgi(service, "127.0.0.1")
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1/v1", timeout=30)
        client = openai.AsyncOpenAI(api_key="none", base_url="http://127.0.0.1/v1", http_client=http)
        question = [{"role": "user", "content": "What is six times seven?"}]
        completion = await client.chat.completions.create(model="llm-council", messages=question)
        content = completion.choices[0].message.content or ""
        body, _, last = content.rpartition("\n\n")
        council_id = completion.id.removeprefix("chatcmpl-")
        assert last == f"[Open this council in the browser](https://council.example.com/c/{council_id})"
        assert body.startswith("Final answer by")
        stream = await client.chat.completions.create(model="llm-council", messages=question, stream=True)
        streamed = "".join([chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices])
        assert streamed.endswith(")") and streamed.splitlines()[-1].startswith("[Open this council in the browser](")
        await http.aclose()
