"""Hostile files sent to a real `council api` process (issue 28): read in reader processes while
the API goes on answering other questions, a file past the deadline named and left out, the
server's memory bounded, and SIGTERM ending the process and its readers within 10 s."""

from __future__ import annotations

import asyncio
import base64
import signal
import time
from collections.abc import Iterable
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from core.storage import Storage
from tests.conftest import MEMBERS
from tests.council_api import API_KEY, council_api
from tests.llm_server import ScriptedLLMServer, council_member
from tests.reader_processes import alive, descendants, peak_rss_kb
from tests.test_attachments_hostile import hostile, until_a_reader_runs  # noqa: F401 - hostile: a fixture

AUTH = {"Authorization": f"Bearer {API_KEY}"}


@pytest_asyncio.fixture
async def llm():
    async with ScriptedLLMServer() as server:
        for name in MEMBERS:
            server.script(name, council_member(f"{name} says: 42.", synthesis=f"Final answer by {name}: 42."))
        yield server


def question(text: str, files: Iterable[tuple[str, bytes]] = ()) -> dict:
    parts = [
        {"type": "file", "file": {"filename": name, "file_data": base64.b64encode(data).decode()}}
        for name, data in files
    ]
    return {"model": "llm-council", "messages": [{"role": "user", "content": [{"type": "text", "text": text}, *parts]}]}


async def stored(database: Path, completion: httpx.Response):
    storage = await Storage.open(str(database))
    try:
        return await storage.councils.get(completion.json()["id"].removeprefix("chatcmpl-"))
    finally:
        await storage.close()


@pytest.mark.slow
async def test_hostile_files_are_read_while_the_api_answers_other_questions(llm, tmp_path, hostile):  # noqa: F811
    # In an order where each file gets some of the question's 100,000 characters.
    four = ["deep.docx", "pages.pdf", "inflating.pdf", "paragraphs.docx"]
    slow = [("empty.docx", hostile("empty.docx")), ("columns.csv", hostile("columns.csv"))]
    # A deadline of 15 s: the slow file's reader is killed then, the others finish well within it.
    async with council_api(llm, tmp_path, COUNCIL_ATTACHMENT_READ_S="15") as api:
        async with httpx.AsyncClient(base_url=api.base_url, headers=AUTH, timeout=120) as http:
            finished: dict[str, float] = {}

            async def ask(label: str, body: dict) -> httpx.Response:
                response = await http.post("/chat/completions", json=body)
                finished[label] = time.monotonic()
                return response

            hostile_asks = [
                asyncio.create_task(ask("four", question("What do these say?", [(n, hostile(n)) for n in four]))),
                asyncio.create_task(ask("line", question("And this?", [("one-line.txt", hostile("one-line.txt"))]))),
                asyncio.create_task(ask("slow", question("And these?", slow))),
            ]
            await until_a_reader_runs(api.process.pid, within_s=60)  # once ~40 MB of JSON are in
            asked_at = time.monotonic()
            plain = await asyncio.gather(*(ask(f"plain {n}", question(f"Six times seven? ({n})")) for n in range(3)))
            four_files, one_line, slow_files = await asyncio.gather(*hostile_asks)
            server_peak_kb = peak_rss_kb(api.process.pid)

            assert [r.status_code for r in (*plain, four_files, one_line, slow_files)] == [200] * 6
            assert all("42" in r.json()["choices"][0]["message"]["content"] for r in plain)
            # Answered while the slow file was still being read (its reader is killed at 15 s).
            answered = max(finished[f"plain {n}"] for n in range(3))
            assert answered < finished["slow"], (answered - asked_at, finished["slow"] - asked_at)

            read = await stored(api.database, four_files)
            assert [a.name for a in read.request.attachments] == four
            assert read.notices == [
                "deep.docx: the rest of it could not be read (damaged or incomplete)",
                "pages.pdf: only the first 200 of 100,000 pages were read (page limit)",
                "inflating.pdf: page 1 could not be read",
                "paragraphs.docx: text cut at the 100,000-character limit for one question; "
                "the rest of the document was not read",
            ]
            line = await stored(api.database, one_line)
            assert sum(a.char_count for a in line.request.attachments) <= 100_000
            cut = await stored(api.database, slow_files)
            assert [a.name for a in cut.request.attachments] == ["columns.csv"]
            assert cut.notices[0] == "empty.docx: could not be read within the 15 s limit for reading one file"
    # The files were parsed elsewhere: the server held their bytes and the extracted text only.
    assert server_peak_kb is not None and server_peak_kb < 600 * 1024, server_peak_kb


async def test_sigterm_stops_the_api_and_its_readers_within_10_s(llm, tmp_path, hostile):  # noqa: F811
    files = [("notes.txt", b"The meeting is on Thursday."), ("empty.docx", hostile("empty.docx"))]
    async with council_api(llm, tmp_path, COUNCIL_ATTACHMENT_READ_S="120") as api:
        async with httpx.AsyncClient(base_url=api.base_url, headers=AUTH, timeout=120) as http:
            asked = asyncio.create_task(http.post("/chat/completions", json=question("When?", files)))
            readers = await until_a_reader_runs(api.process.pid, within_s=30)
            helpers = descendants(api.process.pid)
            api.process.send_signal(signal.SIGTERM)
            started = time.monotonic()
            await asyncio.wait_for(api.process.wait(), 10)
            stopped_in = time.monotonic() - started
            asked.cancel()
            await asyncio.gather(asked, return_exceptions=True)
    assert stopped_in < 10
    for _ in range(100):  # the fork server and the reader go with their parent
        if not alive(helpers | readers):
            break
        await asyncio.sleep(0.05)
    assert not alive(helpers | readers)
