"""What the API owes its clients beyond an answer (issue 22, item 3): no other web site may use it,
a failed council is an error in every form, retries neither triple the cost nor get invited in
vain, parameters it cannot honour are refused, `response_format` is honoured, malformed bodies
get a 400. `council api` runs as a subprocess on loopback; clients are the official `openai` SDK
and raw httpx / sockets."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlsplit

import httpx
import openai
import pytest
import pytest_asyncio

from core.storage import Storage
from tests import council_api as fixtures
from tests.conftest import MEMBERS
from tests.council_api import (
    API_KEY,
    AUTH,
    council_api,
    requests_before_a_later_council,
    script_healthy,
)
from tests.llm_server import ByStage, Fail, Reply, ScriptedLLMServer, council_member, ranking_review

# This module's fixtures, one `council api` for the module (tests/council_api.py).
api, client, healthy, llm_for_api = fixtures.api, fixtures.client, fixtures.healthy, fixtures.llm_for_api
pytestmark = pytest.mark.asyncio(loop_scope="module")
QUESTION = [{"role": "user", "content": "What is six times seven?"}]
BODY = {"model": "llm-council", "messages": QUESTION}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def keyless(llm_for_api, tmp_path_factory):
    """Loopback without keys: the set-up a page on another site would aim at."""
    async with council_api(llm_for_api, tmp_path_factory.mktemp("keyless"), COUNCIL_API_KEYS="") as running:
        yield running


async def _councils(api) -> int:
    storage = await Storage.open(str(api.database))
    try:
        return len(await storage.councils.history(limit=1000))
    finally:
        await storage.close()


# --------------------------------------------------------------------------- a. cross-site requests

MCP_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}},
}


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
async def test_a_post_whose_body_is_not_declared_json_starts_nothing(keyless, llm_for_api, content_type):
    headers = {"Content-Type": content_type} if content_type else {}
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.post(f"{keyless.base_url}/chat/completions", content=json.dumps(BODY), headers=headers)
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_media_type"
    assert response.headers["x-should-retry"] == "false"
    assert await requests_before_a_later_council(keyless, llm_for_api) == []


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "127.0.0.1.evil.example"])
async def test_a_foreign_host_header_is_refused(keyless, llm_for_api, host):
    async with httpx.AsyncClient(timeout=10) as http:
        models = await http.get(f"{keyless.base_url}/models", headers={"Host": host})
        started = await http.post(f"{keyless.base_url}/chat/completions", json=BODY, headers={"Host": host})
    assert models.status_code == started.status_code == 421
    assert models.json()["error"]["code"] == "host_not_allowed"
    assert llm_for_api.requests == []


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]"])
async def test_the_loopback_names_are_served(keyless, host):
    port = urlsplit(keyless.base_url).port
    async with httpx.AsyncClient(timeout=10) as http:
        models = await http.get(f"{keyless.base_url}/models", headers={"Host": f"{host}:{port}"})
    assert models.status_code == 200


async def test_a_browser_origin_is_refused_by_default(keyless, llm_for_api):
    async with httpx.AsyncClient(timeout=10) as http:
        started = await http.post(
            f"{keyless.base_url}/chat/completions", json=BODY, headers={"Origin": "https://evil.example"}
        )
        preflight = await http.options(
            f"{keyless.base_url}/chat/completions",
            headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
        )
    assert started.status_code == preflight.status_code == 403
    assert started.json()["error"]["code"] == "origin_not_allowed"
    assert "access-control-allow-origin" not in started.headers
    assert llm_for_api.requests == []


async def test_allowed_origins_and_hosts_get_cors_headers_and_answers(llm_for_api, tmp_path):
    chat = "https://chat.example"
    async with council_api(
        llm_for_api,
        tmp_path,
        COUNCIL_API_KEYS="",
        COUNCIL_API_CORS_ORIGINS=chat,
        COUNCIL_API_ALLOWED_HOSTS="council.example,localhost",
    ) as running:
        url = f"{running.base_url}/chat/completions"
        async with httpx.AsyncClient(timeout=30) as http:
            preflight = await http.options(
                url,
                headers={
                    "Origin": chat,
                    "Access-Control-Request-Method": "POST",
                    "Access-Control-Request-Headers": "authorization, content-type, x-stainless-os",
                    "Host": "council.example",
                },
            )
            answered = await http.post(url, json=BODY, headers={"Origin": chat, "Host": "council.example"})
            other = await http.post(
                url, json=BODY, headers={"Origin": "https://evil.example", "Host": "council.example"}
            )
            loopback_ip = await http.get(f"{running.base_url}/models")  # 127.0.0.1 is not in the list
            mcp = await http.post(
                f"{running.root}/mcp",
                json=MCP_INITIALIZE,
                headers={"Host": "council.example", "Accept": "application/json, text/event-stream"},
            )
            mcp_elsewhere = await http.post(
                f"{running.root}/mcp",
                json=MCP_INITIALIZE,
                headers={"Host": "evil.example", "Accept": "application/json, text/event-stream"},
            )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == chat
    assert "POST" in preflight.headers["access-control-allow-methods"]
    assert answered.status_code == 200 and answered.headers["access-control-allow-origin"] == chat
    assert answered.json()["choices"][0]["message"]["content"] == "Final answer by alpha: 42."
    assert other.status_code == 403
    assert loopback_ip.status_code == 421
    assert mcp.status_code == 200 and "llm-council" in mcp.text, "the MCP endpoint answers to the same names"
    assert mcp_elsewhere.status_code == 421


# --------------------------------------------------------------------------- b, c. failures and retries


def _all_fail(llm: ScriptedLLMServer) -> None:
    for name in MEMBERS:
        llm.script(name, Fail(503, "upstream overloaded"))


async def test_a_failed_council_streams_an_error_event_that_the_sdk_raises(client, llm_for_api):
    _all_fail(llm_for_api)
    stream = await client.chat.completions.create(model="llm-council", messages=QUESTION, stream=True)
    seen = []
    with pytest.raises(openai.APIError) as raised:
        async for chunk in stream:
            seen.append(chunk)
    assert "The council failed" in raised.value.message
    assert not any(c.choices and c.choices[0].delta.content for c in seen), "a failure is never content"


async def test_the_raw_error_event_is_openai_shaped_and_ends_the_stream(api, llm_for_api):
    _all_fail(llm_for_api)
    async with (
        httpx.AsyncClient(timeout=30) as http,
        http.stream("POST", f"{api.base_url}/chat/completions", headers=AUTH, json=BODY | {"stream": True}) as response,
    ):
        events = [line.removeprefix("data: ") async for line in response.aiter_lines() if line]
    error = json.loads(events[-1])["error"]
    assert set(error) >= {"message", "type", "code"} and error["code"] == "council_failed"
    assert error["message"].startswith("The council failed") and "[DONE]" not in events
    assert all('finish_reason": "stop' not in e for e in events)


async def test_the_sdk_with_its_default_retries_runs_a_failed_council_once(api, llm_for_api):
    _all_fail(llm_for_api)
    before = await _councils(api)
    sdk = openai.AsyncOpenAI(base_url=api.base_url, api_key=API_KEY)  # max_retries=2, as shipped
    with pytest.raises(openai.APIStatusError) as refused:
        await sdk.chat.completions.create(model="llm-council", messages=QUESTION)
    assert refused.value.status_code == 502 and refused.value.response.headers["x-should-retry"] == "false"
    assert await _councils(api) == before + 1
    assert len(llm_for_api.requests_for(stage=1)) == len(MEMBERS)


async def test_a_refused_request_says_no_retry_and_a_rate_limit_says_when(llm_for_api, tmp_path):
    async with council_api(llm_for_api, tmp_path, RATE_LIMIT_USER_PER_HOUR="1") as limited:
        async with httpx.AsyncClient(timeout=30) as http:
            url = f"{limited.base_url}/chat/completions"
            bad = await http.post(url, headers=AUTH, json={"model": "llm-council", "messages": []})
            first = await http.post(url, headers=AUTH, json=BODY)
            limited_now = await http.post(url, headers=AUTH, json=BODY)
    assert bad.status_code == 400 and bad.headers["x-should-retry"] == "false"
    assert first.status_code == 200
    assert limited_now.status_code == 429 and int(limited_now.headers["Retry-After"]) > 60
    assert limited_now.headers["x-should-retry"] == "false"  # longer than any SDK waits


# --------------------------------------------------------------------------- d. parameters


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"n": 2}, "n"),
        (
            {"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}], "tool_choice": "required"},
            "tool_choice",
        ),
        (
            {
                "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
                "tool_choice": {"type": "function", "function": {"name": "f"}},
            },
            "tool_choice",
        ),
        ({"response_format": {"type": "xml"}}, "response_format"),
        ({"response_format": {"type": "json_schema"}}, "response_format"),
        (
            {"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "nonsense"}}}},
            "response_format",
        ),
    ],
)
async def test_parameters_the_council_cannot_honour_are_a_400_naming_them(client, llm_for_api, extra, param):
    with pytest.raises(openai.BadRequestError) as refused:
        await client.chat.completions.create(model="llm-council", messages=QUESTION, **extra)
    error = refused.value.body
    assert error["param"] == param and param in error["message"]
    assert llm_for_api.requests == []


async def test_tools_the_council_may_ignore_are_ignored(client):
    completion = await client.chat.completions.create(
        model="llm-council",
        messages=QUESTION,
        tools=[{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
        tool_choice="auto",
        n=1,
    )
    assert completion.choices[0].message.content == "Final answer by alpha: 42."


SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}, "confidence": {"enum": ["low", "high"]}},
    "required": ["answer", "confidence"],
    "additionalProperties": False,
}
JSON_SCHEMA_FORMAT = {"type": "json_schema", "json_schema": {"name": "product", "schema": SCHEMA, "strict": True}}


async def test_json_schema_is_asked_of_the_chairman_and_its_answer_validated(client, llm_for_api):
    script_healthy(llm_for_api, synthesis='```json\n{"answer": 42, "confidence": "high"}\n```')
    completion = await client.chat.completions.create(
        model="llm-council", messages=QUESTION, response_format=JSON_SCHEMA_FORMAT
    )
    assert json.loads(completion.choices[0].message.content) == {"answer": 42, "confidence": "high"}
    chairman = llm_for_api.requests_for("alpha", stage=3)[0].user
    assert '"confidence"' in chairman and "one JSON object" in chairman
    assert '"confidence"' not in llm_for_api.requests_for("beta", stage=1)[0].user, "members answer freely"


async def test_json_schema_streams_the_json_whole_once_it_fits(client, llm_for_api):
    script_healthy(llm_for_api, synthesis='Here it is: {"answer": 42, "confidence": "low"}')
    stream = await client.chat.completions.create(
        model="llm-council", messages=QUESTION, response_format=JSON_SCHEMA_FORMAT, stream=True
    )
    contents = [c.choices[0].delta.content async for c in stream if c.choices and c.choices[0].delta.content]
    assert contents == ['{"answer": 42, "confidence": "low"}']


async def test_an_answer_that_cannot_fit_the_schema_is_a_502_naming_why(client, llm_for_api):
    script_healthy(llm_for_api, synthesis='{"answer": "forty-two", "confidence": "high"}')
    with pytest.raises(openai.APIStatusError) as refused:
        await client.chat.completions.create(model="llm-council", messages=QUESTION, response_format=JSON_SCHEMA_FORMAT)
    assert refused.value.status_code == 502
    assert refused.value.body["code"] == "response_format_unmet"
    assert "answer" in refused.value.message and "integer" in refused.value.message


async def test_json_object_takes_any_object_and_refuses_prose(client, llm_for_api):
    script_healthy(llm_for_api, synthesis='{"product": 42}')
    fitted = await client.chat.completions.create(
        model="llm-council", messages=QUESTION, response_format={"type": "json_object"}
    )
    assert json.loads(fitted.choices[0].message.content) == {"product": 42}
    script_healthy(llm_for_api, synthesis="Six times seven is forty-two, as every member agreed.")
    with pytest.raises(openai.APIStatusError) as refused:
        await client.chat.completions.create(
            model="llm-council", messages=QUESTION, response_format={"type": "json_object"}
        )
    assert refused.value.status_code == 502 and "no JSON object" in refused.value.message


async def test_a_chairman_fallback_note_stays_out_of_json(client, llm_for_api):
    llm_for_api.script("alpha", ByStage(Reply("alpha: 42."), Reply(ranking_review()), Fail(500, "chair broke")))
    for name in ("beta", "gamma"):
        llm_for_api.script(name, council_member(f"{name}: 42.", synthesis='{"answer": 42, "confidence": "high"}'))
    completion = await client.chat.completions.create(
        model="llm-council", messages=QUESTION, response_format=JSON_SCHEMA_FORMAT
    )
    assert json.loads(completion.choices[0].message.content) == {"answer": 42, "confidence": "high"}
    assert "chair broke" in completion.choices[0].message.model_extra["reasoning_content"]


async def test_usage_comes_in_a_last_chunk_without_choices_only_when_asked(api):
    async def events(body):
        async with (
            httpx.AsyncClient(timeout=30) as http,
            http.stream("POST", f"{api.base_url}/chat/completions", headers=AUTH, json=body) as response,
        ):
            return [
                json.loads(e)
                for line in [x async for x in response.aiter_lines()]
                if (e := line.removeprefix("data: ")) and e != "[DONE]"
            ]

    plain = await events(BODY | {"stream": True})
    asked = await events(BODY | {"stream": True, "stream_options": {"include_usage": True}})
    assert all("usage" not in e for e in plain)
    assert asked[-1]["choices"] == [] and asked[-1]["usage"]["total_tokens"] > 0
    assert asked[-2]["choices"][0]["finish_reason"] == "stop" and all("usage" not in e for e in asked[:-1])


# --------------------------------------------------------------------------- e. malformed bodies


async def test_json_nested_a_thousand_deep_is_a_400(api, llm_for_api):
    deep = "[" * 1000 + "]" * 1000
    nested_in_request = json.dumps(BODY)[:-1] + ', "metadata": ' + '{"a": ' * 200 + "1" + "}" * 200 + "}"
    async with httpx.AsyncClient(timeout=10) as http:
        for body in (deep, nested_in_request):
            response = await http.post(
                f"{api.base_url}/chat/completions", content=body, headers=AUTH | {"Content-Type": "application/json"}
            )
            assert response.status_code == 400, response.text
            assert response.json()["error"]["code"] == "invalid_json"
    assert llm_for_api.requests == []


async def test_a_client_that_hangs_up_mid_body_leaves_one_info_line(api):
    port = urlsplit(api.base_url).port
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        (
            "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {API_KEY}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
            '{"model": "llm-'
        ).encode()
    )
    await writer.drain()
    await asyncio.sleep(0.3)
    writer.close()
    await writer.wait_closed()
    for _ in range(100):
        if any("disconnected before sending" in line for line in api.log):
            break
        await asyncio.sleep(0.05)
    lines = [line for line in api.log if "disconnected before sending" in line]
    assert len(lines) == 1 and "INFO" in lines[0]
    assert not any("Traceback" in line or "ClientDisconnect" in line for line in api.log)
