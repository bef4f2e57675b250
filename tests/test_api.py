"""`council api` as a subprocess on loopback, driven by the official `openai` client and raw HTTP,
with the scripted LLM server behind the council."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import time

import httpx
import openai
import pytest

from core.models import CouncilStatus, Platform
from core.storage import Storage
from tests import council_api as fixtures
from tests.conftest import MEMBERS
from tests.council_api import (
    API_KEY,
    AUTH,
    OTHER_KEY,
    council_api,
    council_env,
    requests_before_a_later_council,
)
from tests.llm_server import ByStage, Fail, Hang, Reply, council_member, ranking_review

# This module's fixtures, one `council api` for the module (tests/council_api.py).
api, client, healthy, llm_for_api = fixtures.api, fixtures.client, fixtures.healthy, fixtures.llm_for_api
pytestmark = pytest.mark.asyncio(loop_scope="module")
QUESTION = [{"role": "user", "content": "What is six times seven?"}]


async def until(condition, within_s: float = 10.0) -> None:
    deadline = time.perf_counter() + within_s
    while not condition():
        if time.perf_counter() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


async def stored(api, council_id: str):
    storage = await Storage.open(str(api.database))
    try:
        return await storage.councils.get(council_id)
    finally:
        await storage.close()


async def test_models_lists_the_council(client):
    models = await client.models.list()
    assert "llm-council" in [m.id for m in models.data]


async def test_completion_answers_with_history_and_is_stored_as_api(client, api, llm_for_api):
    completion = await client.chat.completions.create(
        model="llm-council",
        messages=[
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Remember the number 6."},
            {"role": "assistant", "content": [{"type": "text", "text": "Noted: 6."}]},
            {"role": "user", "content": "Multiply it by seven."},
        ],
        temperature=0.2,  # not the council's to honour: ignored, not refused
    )
    assert completion.object == "chat.completion"
    assert completion.choices[0].message.content == "Final answer by alpha: 42."
    assert completion.choices[0].finish_reason == "stop"
    reasoning = completion.choices[0].message.model_extra["reasoning_content"]
    assert "Stage 2 · anonymous peer review" in reasoning and "Aggregate ranking: 1." in reasoning
    asked = llm_for_api.requests_for("beta", stage=1)[0].messages
    assert [m["content"] for m in asked if m["role"] != "system"][-3:] == [
        "Remember the number 6.",
        "Noted: 6.",
        "Multiply it by seven.",
    ]

    result = await stored(api, completion.id.removeprefix("chatcmpl-"))
    assert result.status is CouncilStatus.OK
    assert result.request.origin.platform is Platform.API and result.request.origin.user_id == "alice"
    assert completion.usage.prompt_tokens == result.usage.prompt_tokens > 0
    assert completion.usage.total_tokens == result.usage.prompt_tokens + result.usage.completion_tokens


async def test_member_and_chairman_prompts_fit_an_api_front_end(client, llm_for_api):
    """Asked through the API, the models are told that Markdown renders, not to spare it for a chat app."""
    llm_for_api.requests.clear()
    await client.chat.completions.create(model="llm-council", messages=QUESTION)
    member = llm_for_api.requests_for("beta", stage=1)[0].messages[0]["content"]
    chairman = json.dumps(llm_for_api.requests_for(stage=3)[0].messages)
    for prompt in (member, chairman):
        assert "renders Markdown fully" in prompt
        assert "Slack or Discord" not in prompt


async def test_stream_sends_progress_as_reasoning_then_the_answer_then_usage(client, api):
    stream = await client.chat.completions.create(
        model="llm-council", messages=QUESTION, stream=True, stream_options={"include_usage": True}
    )
    chunks = [chunk async for chunk in stream]
    usage_chunk = chunks.pop()
    reasoning = "".join((c.choices[0].delta.model_extra or {}).get("reasoning_content") or "" for c in chunks)
    content = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert content == "Final answer by alpha: 42."
    assert reasoning.index("Stage 1") < reasoning.index("Extracted ballot") < reasoning.index("Aggregate ranking")
    first_content = next(i for i, c in enumerate(chunks) if c.choices[0].delta.content)
    assert all(not (c.choices[0].delta.model_extra or {}).get("reasoning_content") for c in chunks[first_content:])
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop" and last.usage is None
    assert usage_chunk.choices == [] and usage_chunk.usage is not None and usage_chunk.usage.total_tokens > 0
    assert all(c.object == "chat.completion.chunk" and c.id == usage_chunk.id for c in chunks)
    assert (
        await stored(api, last.id.removeprefix("chatcmpl-"))
    ).usage.completion_tokens == usage_chunk.usage.completion_tokens


async def test_raw_stream_ends_with_the_finish_chunk_then_done(api):
    async with (
        httpx.AsyncClient(timeout=30) as http,
        http.stream(
            "POST", f"{api.base_url}/chat/completions", headers=AUTH,
            json={"model": "llm-council", "messages": QUESTION, "stream": True},
        ) as response,
    ):  # fmt: skip
        assert response.headers["content-type"].startswith("text/event-stream")
        events = [line.removeprefix("data: ") async for line in response.aiter_lines() if line]
    assert events[-1] == "[DONE]"
    final = json.loads(events[-2])
    assert final["choices"][0]["finish_reason"] == "stop"
    assert all("usage" not in json.loads(e) for e in events[:-1]), "usage only when stream_options asks"


@pytest.mark.parametrize(
    ("body", "status", "code", "says"),
    [
        (b"{not json", 400, "invalid_json", "not valid JSON"),
        (b"[1, 2]", 400, "invalid_json", "JSON object"),
        (json.dumps({"model": "llm-council"}).encode(), 400, "invalid_request", "messages"),
        (json.dumps({"model": "llm-council", "messages": []}).encode(), 400, "invalid_request", "messages"),
        (
            json.dumps({"model": "llm-council", "messages": [{"role": "system", "content": "x"}]}).encode(),
            400, "invalid_request", "no user message",
        ),
        (json.dumps({"model": "gpt-4o", "messages": QUESTION}).encode(), 404, "model_not_found", "llm-council"),
        (
            json.dumps({"model": "llm-council", "messages": [{"role": "user", "content": [
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
            ]}]}).encode(),
            400, "invalid_request", "remote URLs are not fetched",
        ),
        (
            json.dumps({"model": "llm-council", "messages": [{"role": "user", "content": [
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            ]}]}).encode(),
            400, "unreadable_files", "image-1.png",
        ),
        (
            json.dumps({"model": "llm-council", "messages": [{"role": "user", "content": [
                {"type": "text", "text": "Read it"}, {"type": "file", "file": {"file_id": "file-123"}},
            ]}]}).encode(),
            400, "invalid_request", "no file store",
        ),
        (json.dumps({"model": "llm-council", "messages": [{"role": "user", "content": "   "}]}).encode(),
         400, "invalid_request", "empty"),
    ],
)  # fmt: skip
async def test_malformed_requests_get_openai_shaped_errors(api, llm_for_api, body, status, code, says):
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.post(
            f"{api.base_url}/chat/completions", content=body, headers=AUTH | {"Content-Type": "application/json"}
        )
    assert response.status_code == status
    error = response.json()["error"]
    assert error["code"] == code and says in error["message"] and error["type"]
    assert llm_for_api.requests == []


async def test_unknown_path_and_method_are_openai_shaped(api):
    async with httpx.AsyncClient(timeout=10) as http:
        missing = await http.get(f"{api.base_url}/embeddings", headers=AUTH)
        wrong_method = await http.get(f"{api.base_url}/chat/completions", headers=AUTH)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert wrong_method.status_code == 405 and wrong_method.json()["error"]["code"] == "method_not_allowed"


@pytest.mark.parametrize("authorization", [None, "Bearer wrong-key", f"Basic {API_KEY}", f"Bearer {API_KEY}x"])
async def test_missing_or_wrong_key_is_401_and_starts_nothing(api, llm_for_api, authorization):
    headers = {"Authorization": authorization} if authorization else {}
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.post(
            f"{api.base_url}/chat/completions", json={"model": "llm-council", "messages": QUESTION}, headers=headers
        )
        models = await http.get(f"{api.base_url}/models", headers=headers)
    assert response.status_code == 401 and models.status_code == 401
    assert response.json()["error"]["code"] == "invalid_api_key"
    assert API_KEY not in response.text
    assert await requests_before_a_later_council(api, llm_for_api) == []


async def test_openai_client_with_a_wrong_key_raises_authentication_error(api):
    client = openai.AsyncOpenAI(base_url=api.base_url, api_key="sk-wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        await client.chat.completions.create(model="llm-council", messages=QUESTION)


# A hang-up stops the council at once, long before the members' 20 s timeout would end it; the bound
# leaves room for a loaded machine (each poll below opens the database anew).
HANG_UP_STOPS_WITHIN_S = 5.0


async def _wait_until_stored_as(api, status: CouncilStatus, council_id: str, within_s: float) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < within_s:
        result = await stored(api, council_id)
        if result is not None and result.status is status:
            return time.perf_counter() - started
        await asyncio.sleep(0.05)
    raise AssertionError(f"council {council_id} not {status.value} within {within_s}s")


async def _stored_ids(api) -> set[str]:
    storage = await Storage.open(str(api.database))
    try:
        return {summary.council_id for summary in await storage.councils.history(limit=500)}
    finally:
        await storage.close()


async def _new_council_id(api, known: set[str], within_s: float) -> str:
    """The council stored since `known` was read: a waiting client never saw its id, and its
    council is stored only once it has stopped (taking the newest stored one raced with that)."""
    deadline = time.perf_counter() + within_s
    while not (new := await _stored_ids(api) - known):
        if time.perf_counter() > deadline:
            raise AssertionError(f"no new council stored within {within_s}s")
        await asyncio.sleep(0.05)
    assert len(new) == 1, new
    return new.pop()


async def test_a_streaming_client_that_hangs_up_stops_its_council(api, llm_for_api):
    for name in MEMBERS:  # stage 1 never finishes on its own
        llm_for_api.script(name, Hang())
    http = httpx.AsyncClient(timeout=30)
    request = http.build_request(
        "POST", f"{api.base_url}/chat/completions", headers=AUTH,
        json={"model": "llm-council", "messages": QUESTION, "stream": True},
    )  # fmt: skip
    response = await http.send(request, stream=True)
    council_id = response.headers["x-council-id"]
    lines = response.aiter_lines()  # kept referenced: a collected iterator would close the stream
    async for line in lines:  # progress arrives while the members think
        if "reasoning_content" in line:
            break
    await until(lambda: len(llm_for_api.requests) >= len(MEMBERS))
    await response.aclose()
    await http.aclose()

    took = await _wait_until_stored_as(api, CouncilStatus.CANCELLED, council_id, within_s=HANG_UP_STOPS_WITHIN_S)
    calls = len(llm_for_api.requests)
    later = await requests_before_a_later_council(api, llm_for_api)
    assert len(later) == calls == len(MEMBERS), "no model call after the hang-up"
    assert took < HANG_UP_STOPS_WITHIN_S


async def test_a_waiting_client_that_hangs_up_stops_its_council(api, llm_for_api):
    for name in MEMBERS:  # answers arrive, then the reviews never do
        llm_for_api.script(name, ByStage(Reply(f"{name}: 42."), Hang(), Hang()))
    known = await _stored_ids(api)
    async with httpx.AsyncClient(timeout=30) as http:
        waiting = asyncio.create_task(
            http.post(
                f"{api.base_url}/chat/completions", headers=AUTH, json={"model": "llm-council", "messages": QUESTION}
            )
        )
        await until(lambda: len(llm_for_api.requests_for(stage=2)) >= len(MEMBERS))
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
    hung_up = time.perf_counter()
    council_id = await _new_council_id(api, known, within_s=HANG_UP_STOPS_WITHIN_S)
    await _wait_until_stored_as(api, CouncilStatus.CANCELLED, council_id, within_s=HANG_UP_STOPS_WITHIN_S)
    took = time.perf_counter() - hung_up
    calls = len(llm_for_api.requests)
    later = await requests_before_a_later_council(api, llm_for_api)
    assert len(later) == calls and not [r for r in later if r.stage == 3]
    assert took < HANG_UP_STOPS_WITHIN_S


async def test_rate_limit_per_key_is_429_with_retry_after(llm_for_api, tmp_path):
    async with council_api(llm_for_api, tmp_path, RATE_LIMIT_USER_PER_HOUR="1") as limited:
        async with httpx.AsyncClient(timeout=30) as http:
            body = {"model": "llm-council", "messages": QUESTION}
            first = await http.post(f"{limited.base_url}/chat/completions", headers=AUTH, json=body)
            second = await http.post(f"{limited.base_url}/chat/completions", headers=AUTH, json=body)
            other = await http.post(
                f"{limited.base_url}/chat/completions", headers={"Authorization": f"Bearer {OTHER_KEY}"}, json=body
            )
        assert first.status_code == 200 and other.status_code == 200
        assert second.status_code == 429
        assert int(second.headers["Retry-After"]) > 3000
        assert second.json()["error"]["code"] == "rate_limit_exceeded"
        client = openai.AsyncOpenAI(base_url=limited.base_url, api_key=API_KEY, max_retries=0)
        with pytest.raises(openai.RateLimitError):
            await client.chat.completions.create(model="llm-council", messages=QUESTION)


async def test_daily_budget_per_key_is_429_with_retry_after(llm_for_api, tmp_path):
    for name in MEMBERS:
        llm_for_api.script(name, council_member(f"{name}: 42.", synthesis="42.", cost=0.5))
    async with council_api(llm_for_api, tmp_path, COUNCIL_DAILY_BUDGET_USD="1") as budgeted:
        async with httpx.AsyncClient(timeout=30) as http:
            body = {"model": "llm-council", "messages": QUESTION}
            spent = await http.post(f"{budgeted.base_url}/chat/completions", headers=AUTH, json=body)
            refused = await http.post(f"{budgeted.base_url}/chat/completions", headers=AUTH, json=body)
            other = await http.post(
                f"{budgeted.base_url}/chat/completions", headers={"Authorization": f"Bearer {OTHER_KEY}"}, json=body
            )
    assert spent.status_code == 200 and other.status_code == 200
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "daily_budget_exceeded"
    assert 0 < int(refused.headers["Retry-After"]) <= 86400


async def test_refuses_to_serve_without_keys_off_loopback(llm_for_api, tmp_path):
    env = council_env(llm_for_api, tmp_path, COUNCIL_API_KEYS="")
    process = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "bot.cli", "api", "--host", "0.0.0.0", "--port", "0"],
        cwd=tmp_path, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 2
    assert "COUNCIL_API_KEYS" in err.decode() and "Traceback" not in err.decode()


async def test_serves_without_keys_on_loopback_as_the_local_user(llm_for_api, tmp_path):
    async with council_api(llm_for_api, tmp_path, COUNCIL_API_KEYS="") as open_api:
        client = openai.AsyncOpenAI(base_url=open_api.base_url, api_key="anything", max_retries=0)
        completion = await client.chat.completions.create(model="llm-council", messages=QUESTION)
        result = await stored(open_api, completion.id.removeprefix("chatcmpl-"))
    assert result.request.origin.user_id == "local"


async def test_a_failed_council_is_a_502_or_an_error_event_in_the_stream(client, llm_for_api):
    for name in MEMBERS:
        llm_for_api.script(name, Fail(503, "upstream overloaded"))
    with pytest.raises(openai.APIStatusError) as refused:
        await client.chat.completions.create(model="llm-council", messages=QUESTION)
    assert refused.value.status_code == 502 and "The council failed" in refused.value.message
    stream = await client.chat.completions.create(model="llm-council", messages=QUESTION, stream=True)
    with pytest.raises(openai.APIError) as raised:
        _ = [chunk async for chunk in stream]
    assert raised.value.message.startswith("The council failed")


async def test_a_chairman_fallback_is_announced_in_the_answer(client, llm_for_api):
    llm_for_api.script("alpha", ByStage(Reply("alpha: 42."), Reply(ranking_review()), Fail(500, "chair broke")))
    stream = await client.chat.completions.create(model="llm-council", messages=QUESTION, stream=True)
    streamed = "".join([c.choices[0].delta.content or "" async for c in stream])
    completion = await client.chat.completions.create(model="llm-council", messages=QUESTION)
    for text in (streamed, completion.choices[0].message.content):
        assert text.startswith("⚠️") and "alpha" in text.split("\n")[0]
        assert text.rstrip().endswith(": 42.") and "Final answer by" in text
    assert "chair broke" in completion.choices[0].message.model_extra["reasoning_content"]  # the cause, for who looks


async def test_council_serve_serves_the_api_when_keys_are_set(llm_for_api, tmp_path):
    async with council_api(llm_for_api, tmp_path, command="serve") as served:
        async with httpx.AsyncClient(timeout=10) as http:
            models = await http.get(f"{served.base_url}/models", headers=AUTH)
    assert models.status_code == 200 and models.json()["data"][0]["id"] == "llm-council"


async def test_image_and_file_parts_reach_the_council(client, api, llm_for_api):
    import base64

    from tests.attachment_files import PNG_1PX, make_pdf

    pdf = base64.b64encode(make_pdf(["The meeting is on Thursday."])).decode()
    png = base64.b64encode(PNG_1PX).decode()
    completion = await client.chat.completions.create(
        model="llm-council",
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "When is the meeting?"},
                    {
                        "type": "file",
                        "file": {"filename": "agenda.pdf", "file_data": f"data:application/pdf;base64,{pdf}"},
                    },
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
                ],
            }
        ],
    )
    asked = llm_for_api.requests_for("alpha", stage=1)[0]
    assert "File name: agenda.pdf" in asked.user and "The meeting is on Thursday." in asked.user
    assert "image-2.png" in asked.user  # named, not shown: the scripted models list no image input
    result = await stored(api, completion.id.removeprefix("chatcmpl-"))
    assert [a.name for a in result.request.attachments] == ["agenda.pdf", "image-2.png"]


async def test_the_quick_model_runs_a_quick_council(client, api, llm_for_api):
    assert "llm-council-quick" in [m.id for m in (await client.models.list()).data]
    completion = await client.chat.completions.create(
        model="llm-council-quick", messages=[{"role": "user", "content": "Six times seven?"}]
    )
    result = await stored(api, completion.id.removeprefix("chatcmpl-"))
    assert result.request.config.mode == "quick" and len(result.answers) == 2
    assert not llm_for_api.requests_for(stage=2)


async def test_the_auto_model_escalates_when_the_first_two_disagree(client, api, llm_for_api):
    assert "llm-council-auto" in [m.id for m in (await client.models.list()).data]
    completion = await client.chat.completions.create(model="llm-council-auto", messages=QUESTION)
    result = await stored(api, completion.id.removeprefix("chatcmpl-"))
    assert result.request.config.mode == "auto" and result.escalated is True  # "alpha says: 42." vs "beta says: 42."
    assert len(llm_for_api.requests) == 7 and len(llm_for_api.requests_for(stage=1)) == 3
    assert "Escalated: the first two answers disagreed" in completion.choices[0].message.reasoning_content
    assert completion.metadata == {
        "council_id": result.council_id,
        "status": "ok",
        "mode": "auto",
        "escalated": True,
        "author": "chairman",
        "author_line": "by the chairman, alpha",
        "author_note": None,
        "failed_members": [],
        "ballots": "Ballots read: 3 of 3",
        "late_reviews": None,
        "agreement_w": result.aggregate.agreement_w,
        "consensus": None,  # these reviewers give no rubric scores
        "scores": {},
        "composition": result.composition,
        "disagreement": result.disagreement.model_dump(mode="json"),
        "unsure": False,  # no eval run of this line-up and COUNCIL_UNSURE_BELOW 0: never
        "unsure_line": None,
        "strategy": None,  # not `best`
        "rounds": [],
        "lenses": {},
        "self_moa": None,
    }


async def test_the_reasoning_block_says_what_quick_and_auto_councils_do(client, llm_for_api):
    """As Open WebUI shows it (the streamed `reasoning_content`): a quick council says it is quick;
    auto mode's escalation is a heading of its own naming the whole council, then the others' answers."""

    async def reasoning(model: str) -> str:
        stream = await client.chat.completions.create(model=model, messages=QUESTION, stream=True)
        parts = [chunk.choices[0].delta.model_extra.get("reasoning_content") async for chunk in stream if chunk.choices]
        return "".join(part for part in parts if part)

    quick = await reasoning("llm-council-quick")
    assert quick.startswith("Quick council: ") and "Stage 3 · the chairman compares the two answers" in quick
    auto = await reasoning("llm-council-auto")  # "alpha says: 42." vs "beta says: 42.": they disagree
    assert auto.startswith("Auto council: ")
    assert auto.count("**Stage 1 · members answer**") == 1 and "**Stage 1 · the other members answer**" in auto
    assert "\n- Escalated" not in auto
    assert "The whole council deliberates: alpha, beta, gamma." in auto


async def test_the_auto_model_stops_at_two_answers_that_agree(client, api, llm_for_api):
    for name in MEMBERS:  # whichever two admission picks (the fastest by stored latency) agree
        llm_for_api.script(name, council_member("42."))
    completion = await client.chat.completions.create(model="llm-council-auto", messages=QUESTION)
    result = await stored(api, completion.id.removeprefix("chatcmpl-"))
    assert result.escalated is False and len(llm_for_api.requests) == 2
    assert completion.choices[0].message.content == "42."
    stream = await client.chat.completions.create(model="llm-council-auto", messages=QUESTION, stream=True)
    last = [chunk async for chunk in stream][-1]
    assert last.metadata["mode"] == "auto" and last.metadata["escalated"] is False


# --------------------------------------------------------------------------- members as models


async def test_models_lists_each_member_and_the_chairman_once(client):
    ids = [m.id for m in (await client.models.list()).data]
    councils = ["llm-council", "llm-council-quick", "llm-council-auto", "llm-council-refine", "llm-council-self-moa"]
    councils.append("llm-council-best")
    assert ids == [*councils, *MEMBERS]  # alpha chairs: listed once


def councils_stored(api) -> int:
    with sqlite3.connect(api.database) as db:
        return db.execute("SELECT COUNT(*) FROM councils").fetchone()[0]


async def test_a_member_answers_alone(client, api, llm_for_api):
    before = councils_stored(api)
    completion = await client.chat.completions.create(
        model="beta",
        messages=[{"role": "system", "content": "Answer with a number."}, *QUESTION],
        temperature=0.0,
        max_tokens=5,
    )
    assert completion.model == "beta" and completion.choices[0].message.content == "beta says: 42."
    assert completion.choices[0].finish_reason == "stop" and completion.usage.completion_tokens == 3
    [call] = llm_for_api.requests  # beta alone: no council, no other model
    assert call.model == "beta" and call.body["temperature"] == 0.0 and call.body["max_tokens"] == 5
    assert [m["role"] for m in call.messages] == ["system", "user"]
    assert call.messages[0]["content"] == "Answer with a number." and call.user == QUESTION[0]["content"]
    assert councils_stored(api) == before  # no council


async def test_a_member_streams_alone_and_the_chairman_answers_too(client, llm_for_api):
    stream = await client.chat.completions.create(
        model="gamma", messages=QUESTION, stream=True, stream_options={"include_usage": True}
    )
    pieces, usage = [], None
    async for chunk in stream:
        pieces += [c.delta.content or "" for c in chunk.choices]
        usage = chunk.usage or usage
    assert "".join(pieces) == "gamma says: 42." and usage is not None and usage.completion_tokens == 3
    completion = await client.chat.completions.create(model="alpha", messages=QUESTION)
    assert completion.choices[0].message.content == "alpha says: 42."
    assert [r.model for r in llm_for_api.requests] == ["gamma", "alpha"]


async def test_a_model_that_is_no_member_is_404_and_a_failing_member_is_502(client, llm_for_api):
    with pytest.raises(openai.NotFoundError) as missing:
        await client.chat.completions.create(model="delta", messages=QUESTION)
    assert "alpha, beta, gamma" in str(missing.value)
    llm_for_api.script("beta", Fail(401, "invalid api key"))
    with pytest.raises(openai.InternalServerError) as failed:
        await client.chat.completions.create(model="beta", messages=QUESTION)
    assert failed.value.status_code == 502 and "auth 401" in str(failed.value)
    assert "api-test-upstream-key" not in str(failed.value)


async def test_metadata_chooses_the_members_and_chairman(client, api, llm_for_api):
    # issue 33: OpenAI's request `metadata` (string values) picks this council's members and chairman
    completion = await client.chat.completions.create(
        model="llm-council", messages=QUESTION, metadata={"members": "gamma, beta", "chairman": "gamma"}
    )
    result = await stored(api, completion.id.removeprefix("chatcmpl-"))
    assert (result.request.config.members, result.request.config.chairman) == (["gamma", "beta"], "gamma")
    assert sorted(r.model for r in llm_for_api.requests_for(stage=1)) == ["beta", "gamma"]


async def test_the_best_model_says_which_strategy_ran_and_why_first(client, api, llm_for_api):
    assert "llm-council-best" in [m.id for m in (await client.models.list()).data]
    completion = await client.chat.completions.create(model="llm-council-best", messages=QUESTION)
    line = "standard: no eval run of this line-up yet"
    assert completion.metadata["strategy"] == {"mode": "standard", "line": line, "run": None, "seat": None}
    assert completion.metadata["mode"] == "standard" and completion.metadata["unsure"] is False
    assert completion.choices[0].message.content.startswith(f"❔ {line}\n\n")
    stream = await client.chat.completions.create(model="llm-council-best", messages=QUESTION, stream=True)
    content = "".join([chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices])
    assert content.startswith(f"❔ {line}\n\n")


async def test_a_long_answer_comes_back_whole_streamed_or_not(client, llm_for_api):
    """The answer the chat apps cut (tests/long_answer.py) has no limit here: a front end renders
    it, so the API returns every character, its code block whole, with no cut note."""
    from tests.long_answer import CODE_AT, LONG_ANSWER

    llm_for_api.script("alpha", ByStage(Reply("alpha: 42."), Reply(ranking_review()), Reply(LONG_ANSWER)))
    completion = await client.chat.completions.create(model="llm-council", messages=QUESTION)
    stream = await client.chat.completions.create(model="llm-council", messages=QUESTION, stream=True)
    streamed = "".join([c.choices[0].delta.content or "" async for c in stream])
    code = LONG_ANSWER[CODE_AT : LONG_ANSWER.index("```", CODE_AT + 3) + 3]
    for text in (completion.choices[0].message.content, streamed):
        assert text is not None and text.strip() == LONG_ANSWER.strip()
        assert code in text and "cut here" not in text
