"""Doubt measured by an eval, end to end: a stored `council eval` run of the same line-up whose
standard council was unsure under consensus 70, and members whose ballots disagree (W 0). The unsure
line names that run and its figure, and is said first in Slack, in the API's answer (openai client),
in MCP's (mcp client), in the terminal (`council ask`) and on the web council page. No
COUNCIL_UNSURE_BELOW is set anywhere."""

from __future__ import annotations

import sys

import httpx
import openai
from markupsafe import escape
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from core.models import Origin, Platform
from core.storage import Storage
from tests import test_slack_adapter
from tests.council_api import API_KEY, ROOT, council_api, council_env
from tests.measured_fakes import THRESHOLD, measured_line, script_disagreeing, store_eval_run
from tests.test_cli import council as council_command
from tests.test_slack_adapter import results, section_texts
from tests.web_app import serve_web

env = test_slack_adapter.env  # the fixture
QUESTION = "What is six times seven?"


async def seeded(database: str, chairman: str = "alpha") -> str:
    storage = await Storage.open(database)
    try:
        return await store_eval_run(storage, chairman)
    finally:
        await storage.close()


async def test_slack_says_the_measured_doubt_first(env, llm):
    run_id = await store_eval_run(env.service.storage)
    script_disagreeing(llm)
    await env.command(QUESTION)
    await env.fake.wait_for(lambda: results(env.fake))
    await env.settle()
    [answer] = results(env.fake)
    council_id = answer.args["blocks"][0]["block_id"].split("-")[2]
    stored = await env.service.queries.get_result(council_id)
    assert stored.unsure is not None and stored.unsure.threshold.run == run_id
    assert stored.unsure.consensus < THRESHOLD and stored.request.config.unsure_below.below == THRESHOLD
    first = section_texts(answer.args["blocks"]).splitlines()[0]
    assert first == f":grey_question: {measured_line(run_id, stored.unsure.consensus)}"


async def test_the_api_and_mcp_say_the_measured_doubt_first(llm, tmp_path):
    run_id = await seeded(str(tmp_path / "api.db"))
    script_disagreeing(llm)
    line = measured_line(run_id)
    async with council_api(llm, tmp_path) as api:
        client = openai.AsyncOpenAI(base_url=api.base_url, api_key=API_KEY, max_retries=0)
        completion = await client.chat.completions.create(
            model="llm-council", messages=[{"role": "user", "content": QUESTION}]
        )
        stream = await client.chat.completions.create(
            model="llm-council", messages=[{"role": "user", "content": QUESTION}], stream=True
        )
        streamed = "".join([chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices])
    assert completion.metadata["unsure"] is True and completion.metadata["unsure_line"] == line
    assert completion.choices[0].message.content == f"❔ {line}\n\nFinal answer by alpha: 42."
    assert streamed.startswith(f"❔ {line}\n\n")  # the live transcript judges it as the stored result does
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "bot.cli", "mcp"], env=council_env(llm, tmp_path), cwd=str(ROOT)
    )
    async with Client(params) as mcp:
        result = await mcp.call_tool("consult_council", {"question": QUESTION})
    assert not result.is_error, result.content
    answer = result.structured_content
    assert answer["unsure"] is True and answer["unsure_line"] == line
    assert answer["answer"].startswith(f"❔ {line}\n\n")


async def test_the_terminal_says_the_measured_doubt_first(llm, tmp_path):
    run_id = await seeded(str(tmp_path / "cli.db"), chairman="beta")  # the terminal's line-up is chaired by beta
    script_disagreeing(llm)
    code, out, err = await council_command(tmp_path, llm, "ask", QUESTION)
    assert code == 0, err
    assert out.startswith(f"❔ {measured_line(run_id)}\n\n"), out


async def test_the_web_council_page_says_the_measured_doubt_first(llm, tmp_path):
    from core.service import CouncilService
    from tests.conftest import make_settings

    service = await CouncilService.open(make_settings(llm, tmp_path))
    try:
        run_id = await store_eval_run(service.storage)
        script_disagreeing(llm)
        origin = Origin(platform=Platform.CLI, channel_id="terminal", user_id="tester")
        result = await (await service.start_council(QUESTION, origin)).wait()
        async with serve_web(service) as url, httpx.AsyncClient(base_url=url, timeout=20) as web:
            twin = (await web.get(f"/c/{result.council_id}", headers={"Accept": "application/json"})).json()
            html = (await web.get(f"/c/{result.council_id}")).text
    finally:
        await service.aclose()
    line = measured_line(run_id)
    assert twin["lead"] == [line]
    shown = f'<p class="note unsure">{escape(line)}</p>'
    assert shown in html and html.index(shown) < html.index("Final answer by alpha: 42.")
