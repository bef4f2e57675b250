"""Open WebUI in front of the API (issue 22, item 4): its background tasks (title, tags, follow-up
suggestions) are answered by one model, never a council; a trusted front end's key may name the
end user, other keys may not. Requests are shaped as Open WebUI sends them (one user message
starting with `### Task:`, `stream: false`, its X-OpenWebUI-* headers); `council api` runs as a
subprocess against the scripted LLM server."""

from __future__ import annotations

import asyncio
import sys
from urllib.parse import quote

import httpx
import pytest

from core.models import Platform
from core.storage import Storage
from tests.conftest import MEMBERS
from tests.council_api import API_KEY, council_api, council_env

OWUI_KEY = "sk-council-test-openwebui"
KEYS = f"owui:{OWUI_KEY},alice:{API_KEY}"
# Recorded from Open WebUI 0.12.4 (its title task after a first question), shortened.
TITLE_TASK = (
    "### Task:\nGenerate a concise title summarizing the chat history.\n### Guidelines:\n"
    "- The title should clearly represent the main theme or subject of the conversation.\n"
    '- Keep it short: 2-4 words is best.\n### Output:\nJSON format: { "title": "your concise title here" }\n'
    "### Chat History:\n<chat_history>\nUSER: Postgres or SQLite for a 5-person team?\nASSISTANT: \n</chat_history>"
)


def owui_headers(user_id: str = "6f1c-user", name: str = "Ada Lovelace", key: str = OWUI_KEY) -> dict[str, str]:
    """What Open WebUI 0.12.4 sent with ENABLE_FORWARD_USER_INFO_HEADERS=true."""
    return {
        "Authorization": f"Bearer {key}",
        "X-OpenWebUI-Auth-Type": "jwt",
        "X-OpenWebUI-User-Name": name,
        "X-OpenWebUI-User-Id": user_id,
        "X-OpenWebUI-User-Email": "ada@example.com",
        "X-OpenWebUI-User-Role": "user",
        "X-OpenWebUI-Chat-Id": "c0ffee-chat",
    }


async def _stored(api) -> list:
    storage = await Storage.open(str(api.database))
    try:
        summaries = await storage.councils.history(limit=100)
        return [await storage.councils.get(s.council_id) for s in summaries]
    finally:
        await storage.close()


@pytest.mark.parametrize("forwarded", [True, False])
async def test_a_background_task_is_answered_by_one_model_not_a_council(llm, tmp_path, forwarded):
    async with council_api(llm, tmp_path, COUNCIL_API_KEYS=KEYS) as api:
        headers = owui_headers() if forwarded else {"Authorization": f"Bearer {OWUI_KEY}"}
        async with httpx.AsyncClient(timeout=30) as http:
            response = await http.post(
                f"{api.base_url}/chat/completions",
                headers=headers,
                json={
                    "model": "llm-council",
                    "messages": [{"role": "user", "content": TITLE_TASK}],
                    "stream": False,
                    "max_tokens": 1000,
                },
            )
        assert response.status_code == 200, response.text
        body = response.json()
        assert len(llm.requests) == 1, "one model call, no council"
        asked = llm.requests[0]
        assert asked.model in MEMBERS and asked.user.startswith("### Task:") and asked.body["max_tokens"] == 1000
        assert body["choices"][0]["message"]["content"] == f"{asked.model} says: the answer is 42."
        assert body["model"] == "llm-council" and response.headers["x-council-task-model"] == asked.model
        assert await _stored(api) == []


async def test_the_task_model_setting_picks_who_answers_tasks(llm, tmp_path):
    async with council_api(llm, tmp_path, COUNCIL_API_KEYS=KEYS, COUNCIL_API_TASK_MODEL="gamma") as api:
        async with httpx.AsyncClient(timeout=30) as http:
            response = await http.post(
                f"{api.base_url}/chat/completions",
                headers=owui_headers(),
                json={"model": "llm-council-quick", "messages": [{"role": "user", "content": TITLE_TASK}]},
            )
    assert response.status_code == 200
    assert [r.model for r in llm.requests] == ["gamma"]


async def test_the_same_text_streamed_is_a_chat_message_and_gets_a_council(llm, tmp_path):
    async with council_api(llm, tmp_path, COUNCIL_API_KEYS=KEYS) as api:
        async with httpx.AsyncClient(timeout=30) as http:
            response = await http.post(
                f"{api.base_url}/chat/completions",
                headers=owui_headers(),
                json={"model": "llm-council", "messages": [{"role": "user", "content": TITLE_TASK}], "stream": True},
            )
    assert response.status_code == 200 and "[DONE]" in response.text
    assert len(llm.requests_for(stage=1)) == len(MEMBERS)


async def test_a_trusted_front_end_names_its_end_users_and_others_cannot(llm, tmp_path):
    body = {"model": "llm-council", "messages": [{"role": "user", "content": "What is six times seven?"}]}
    async with council_api(
        llm, tmp_path, COUNCIL_API_KEYS=KEYS, COUNCIL_API_TRUSTED_KEYS="owui", RATE_LIMIT_USER_PER_HOUR="1"
    ) as api:
        url = f"{api.base_url}/chat/completions"
        async with httpx.AsyncClient(timeout=30) as http:
            ada = await http.post(url, headers=owui_headers("u-ada", "Ada"), json=body)
            ada_again = await http.post(url, headers=owui_headers("u-ada", "Ada"), json=body)
            grace = await http.post(url, headers=owui_headers("u-grace", quote("Grâce H", safe=" ")), json=body)
            by_field = await http.post(
                url, headers={"Authorization": f"Bearer {OWUI_KEY}"}, json=body | {"user": "u-linus"}
            )
            as_pipeline = await http.post(  # the user object Open WebUI sends to pipelines
                url,
                headers={"Authorization": f"Bearer {OWUI_KEY}"},
                json=body | {"user": {"id": "u-ken", "name": "Ken", "email": "ken@example.com", "role": "user"}},
            )
            # alice's key is not trusted: what it claims is ignored, and her own limit applies.
            alice = await http.post(url, headers=owui_headers("u-ada-2", "Ada", key=API_KEY), json=body)
            alice_again = await http.post(url, headers=owui_headers("u-other", "Eve", key=API_KEY), json=body)
    assert [r.status_code for r in (ada, ada_again, grace, by_field, as_pipeline, alice, alice_again)] == [
        200, 429, 200, 200, 200, 200, 429,
    ]  # fmt: skip
    askers = {
        (r.request.origin.channel_id, r.request.origin.user_id, r.request.origin.user_name) for r in await _stored(api)
    }
    assert askers == {
        ("owui", "owui/u-ada", "Ada"),
        ("owui", "owui/u-grace", "Grâce H"),  # Open WebUI percent-encodes the name
        ("owui", "owui/u-linus", "u-linus"),
        ("owui", "owui/u-ken", "Ken"),
        ("alice", "alice", "alice"),
    }
    assert all(r.request.origin.platform is Platform.API for r in await _stored(api))


async def test_a_trusted_name_that_is_no_key_is_a_one_line_error(llm, tmp_path):
    env = council_env(llm, tmp_path, COUNCIL_API_KEYS=KEYS, COUNCIL_API_TRUSTED_KEYS="owui,webui", COUNCIL_API_PORT="0")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "api",
        cwd=tmp_path, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await asyncio.wait_for(process.communicate(), 30)
    text = err.decode()
    assert process.returncode == 2, text
    assert "COUNCIL_API_TRUSTED_KEYS" in text and "webui" in text and "Traceback" not in text
    assert OWUI_KEY not in text and API_KEY not in text
