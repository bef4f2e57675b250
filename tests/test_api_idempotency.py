"""`Idempotency-Key` (issue 22, item 3c): a request that repeats a key its caller used within 24 h
gets that council's answer, stored in the database (SQLite and PostgreSQL), instead of a second
council. `council api` as a subprocess, the official `openai` SDK and raw httpx."""

from __future__ import annotations

import asyncio
import json

import httpx
import openai
import pytest

from core.storage import Storage
from tests.conftest import BACKENDS, MEMBERS, backend_url
from tests.council_api import API_KEY, OTHER_KEY, council_api
from tests.llm_server import ByStage, Fail, Reply, ranking_review

QUESTION = [{"role": "user", "content": "What is six times seven?"}]


@pytest.fixture(params=BACKENDS)
def database_url(request, tmp_path) -> str:
    return backend_url(request, tmp_path)


async def _councils(database_url: str) -> list[str]:
    storage = await Storage.open(database_url)
    try:
        return [s.council_id for s in await storage.councils.history(limit=100)]
    finally:
        await storage.close()


async def test_a_repeated_key_returns_the_stored_answer_and_starts_nothing(llm, tmp_path, database_url):
    async with council_api(llm, tmp_path, DATABASE_URL=database_url) as api:
        alice = openai.AsyncOpenAI(base_url=api.base_url, api_key=API_KEY, max_retries=0)
        key = {"Idempotency-Key": "order-7"}
        first = await alice.chat.completions.create(model="llm-council", messages=QUESTION, extra_headers=key)
        calls = len(llm.requests)
        again = await alice.chat.completions.create(model="llm-council", messages=QUESTION, extra_headers=key)
        streamed = await alice.chat.completions.create(
            model="llm-council", messages=QUESTION, extra_headers=key, stream=True
        )
        chunks = [c async for c in streamed]
        assert len(llm.requests) == calls, "no model was asked again"
        assert again.id == first.id and again.choices[0].message.content == first.choices[0].message.content
        assert chunks[0].id == first.id
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Final answer by alpha: 42."
        assert await _councils(database_url) == [first.id.removeprefix("chatcmpl-")]

        # The key is the caller's: bob's same key is his own council; a new key is a new council.
        bob = openai.AsyncOpenAI(base_url=api.base_url, api_key=OTHER_KEY, max_retries=0)
        bobs = await bob.chat.completions.create(model="llm-council", messages=QUESTION, extra_headers=key)
        fresh = await alice.chat.completions.create(
            model="llm-council", messages=QUESTION, extra_headers={"Idempotency-Key": "order-8"}
        )
        assert len({first.id, bobs.id, fresh.id}) == 3

        with pytest.raises(openai.UnprocessableEntityError) as reused:
            await alice.chat.completions.create(
                model="llm-council", messages=[{"role": "user", "content": "Another question?"}], extra_headers=key
            )
        assert reused.value.body["code"] == "idempotency_key_reused"
        assert reused.value.response.headers["x-should-retry"] == "false"
        assert len(await _councils(database_url)) == 3


async def test_a_retry_while_the_council_runs_follows_it(llm, tmp_path):
    for name in MEMBERS:  # stage 1 takes a second: time for the retry to arrive meanwhile
        llm.script(
            name,
            ByStage(
                Reply(f"{name} says: 42.", delay_s=1.0), Reply(ranking_review()), Reply(f"Final answer by {name}: 42.")
            ),
        )
    async with council_api(llm, tmp_path) as api:
        async with httpx.AsyncClient(timeout=30) as http:
            body = {"model": "llm-council", "messages": QUESTION}
            headers = {"Authorization": f"Bearer {API_KEY}", "Idempotency-Key": "slow-1"}
            first = asyncio.create_task(http.post(f"{api.base_url}/chat/completions", json=body, headers=headers))
            while len(llm.requests_for(stage=1)) < len(MEMBERS):  # noqa: ASYNC110 - another process's requests
                await asyncio.sleep(0.02)
            second = await http.post(f"{api.base_url}/chat/completions", json=body, headers=headers)
            answered = await first
    assert [answered.status_code, second.status_code] == [200, 200]
    assert answered.json()["id"] == second.json()["id"]
    assert second.json()["choices"][0]["message"]["content"] == "Final answer by alpha: 42."
    assert len(llm.requests_for(stage=1)) == len(MEMBERS)


async def test_a_failed_council_under_a_key_is_replayed_as_the_same_failure(llm, tmp_path):
    for name in MEMBERS:
        llm.script(name, Fail(503, "upstream overloaded"))
    async with council_api(llm, tmp_path) as api:
        sdk = openai.AsyncOpenAI(base_url=api.base_url, api_key=API_KEY)  # default retries
        for _ in range(2):
            with pytest.raises(openai.APIStatusError) as failed:
                await sdk.chat.completions.create(
                    model="llm-council", messages=QUESTION, extra_headers={"Idempotency-Key": "k"}
                )
            assert failed.value.status_code == 502 and "The council failed" in failed.value.message
    assert len(llm.requests_for(stage=1)) == len(MEMBERS)


async def test_a_refused_request_frees_its_key(llm, tmp_path):
    unreadable = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            ],
        }
    ]
    async with council_api(llm, tmp_path) as api:
        alice = openai.AsyncOpenAI(base_url=api.base_url, api_key=API_KEY, max_retries=0)
        key = {"Idempotency-Key": "try-again"}
        with pytest.raises(openai.BadRequestError):
            await alice.chat.completions.create(model="llm-council", messages=unreadable, extra_headers=key)
        answered = await alice.chat.completions.create(model="llm-council", messages=QUESTION, extra_headers=key)
    assert answered.choices[0].message.content == "Final answer by alpha: 42."


async def test_a_repeated_key_after_a_restart_follows_the_stored_council_as_it_was_told(llm, tmp_path):
    """The council is no longer in memory (another process, or let go: core/durable/runs.py): a repeated
    key is told the stored council's story, its progress too, as the first request was."""
    body = {"model": "llm-council", "stream": True, "messages": QUESTION}
    headers = {"Authorization": f"Bearer {API_KEY}", "Idempotency-Key": "restart-1"}

    async def streamed(api) -> tuple[str, str]:
        reasoning, content = [], []
        async with httpx.AsyncClient(timeout=60) as http:
            async with http.stream("POST", f"{api.base_url}/chat/completions", json=body, headers=headers) as response:
                async for line in response.aiter_lines():
                    if line.startswith("data: {"):
                        for choice in json.loads(line.removeprefix("data: "))["choices"]:
                            reasoning.append(choice["delta"].get("reasoning_content") or "")
                            content.append(choice["delta"].get("content") or "")
        return "".join(reasoning), "".join(content)

    async with council_api(llm, tmp_path) as api:
        first = await streamed(api)
    calls = len(llm.requests)
    async with council_api(llm, tmp_path) as api:  # a new process: nothing of the council in memory
        again = await streamed(api)
    assert len(llm.requests) == calls, "no model was asked again"
    assert again[1] == first[1] == "Final answer by alpha: 42."
    assert "alpha" in again[0] and again[0].count("\n") >= 3, again[0]  # the council's progress, told again
