"""What a first-time visitor of the browser app reads (bot/web): the calls an auto answer that stood
as written made, the web's own platform label, which model each review's labels stood for, times
with their zone, how to make an eval run, history rows with an answer preview and who asked, a
search's count and snippets, a copy button and highlighted code; and model text that is slow to
render shown as plain text, off the event loop."""

from __future__ import annotations

import re

import httpx
import pytest

from core.models import AgreementCheck, CouncilConfig, MemberAnswer, Platform, Synthesis
from core.models.browse import WEB_CHANNEL
from tests.test_web import JSON, council, csrf_of
from tests.web_app import serve_web

BOMB = "*a " * 20000 + "b" + " a*" * 20000  # nested emphasis: over a second of markdown-it per copy


@pytest.fixture
async def web(service):
    async with serve_web(service) as url, httpx.AsyncClient(base_url=url, timeout=60) as client:
        yield client


def stood_as_written(council_id: str):  # type: ignore[no-untyped-def]
    """Auto mode whose first two answers were the same: the first stands, no review, no chairman."""
    base = council(council_id)
    answers = [
        MemberAnswer(model=m, label=label, text="Paris.", latency_s=1.0) for m, label in (("m-a", "A"), ("m-b", "B"))
    ]
    request = base.request.model_copy(
        update={"config": CouncilConfig(members=["m-a", "m-b", "m-c"], chairman="m-a", mode="auto")}
    )
    return base.model_copy(
        update={
            "request": request,
            "answers": answers,
            "reviews": [],
            "aggregate": None,
            "label_to_model": {"A": "m-a", "B": "m-b"},
            "synthesis": Synthesis(model="m-a", text="Paris.", by_chairman=False, agreed=True),
            "agreement": AgreementCheck(escalated=False, reason="the first two answers are the same"),
            "timings": {"stage1_s": 1.0, "total_s": 1.0},
            "notices": [],
        }
    )


async def test_an_auto_answer_that_stood_as_written_counts_and_draws_only_the_calls_made(service, web):
    await service.storage.save_result(stood_as_written("a070000000000001"))
    page = (await web.get("/c/a070000000000001")).text
    assert "· 2 calls" in page and "3 calls" not in page
    assert "chairman failed" not in page  # it stood as written: no chairman failed (the voice's sentence)
    svg = page[page.index('<h2 id="timeline-h">') :]
    assert 'class="stage3' not in svg and "synthesis: m-a" not in svg
    twin = (await web.get("/c/a070000000000001", headers=JSON)).json()
    assert [c["role"] for c in twin["timeline"]] == ["answer", "answer"]


async def test_a_council_asked_in_the_browser_is_labelled_web(service, web):
    operator = council("e0b0000000000001", platform=Platform.CLI, workspace=None, channel=WEB_CHANNEL, user="operator")
    person = council("e0b0000000000002", channel=WEB_CHANNEL, user="U1")
    for result in (operator, person):
        await service.storage.save_result(result)
    first = (await web.get("/c/e0b0000000000001")).text
    second = (await web.get("/c/e0b0000000000002")).text
    assert '<p class="meta">web ·' in first and "terminal" not in first
    assert '<p class="meta">web · Slack ·' in second and "Slack #web" not in second
    listed = (await web.get("/")).text
    rows = listed[listed.index('<ol class="councils">') :]
    assert "terminal" not in rows and "#web" not in rows and rows.count("· web") == 2


async def test_each_review_shows_which_model_each_label_stood_for(service, web):
    await service.storage.save_result(council("c0ffee0000000001"))
    page = (await web.get("/c/c0ffee0000000001")).text
    review = page[page.index("Review by m-a") : page.index("Review by m-b")]
    assert "Response B = <strong>m-b</strong>" in review and "Response C = <strong>m-c</strong>" in review


async def test_times_carry_their_zone_and_history_rows_show_who_asked_and_the_answer(service, web):
    await service.storage.save_result(council("c0ffee0000000001", user="U1", answer="**Paris** is the capital."))
    page = (await web.get("/c/c0ffee0000000001")).text
    assert re.search(r'<time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d UTC</time>', page)
    history = (await web.get("/")).text
    row = history[history.index('class="council-row"') :]
    assert "asked by U1" in row and '<p class="preview">Paris is the capital.</p>' in row
    assert re.search(r"\d\d:\d\d UTC</time>", row)


async def test_eval_with_no_runs_says_how_to_make_one(web):
    page = (await web.get("/eval")).text
    assert "No stored <code>council eval</code> run" in page and "council eval --limit 20" in page


async def test_a_search_says_how_many_councils_match_and_shows_the_words_in_context(service, web):
    for i in range(3):
        answer = f"Filler words come first. Then volcanoes erupt when magma rises, number {i}."
        await service.storage.save_result(council(f"{i:016x}", question=f"Question {i}?", answer=answer))
    await service.storage.save_result(council("f" * 16, question="Bread?", answer="Sourdough."))
    page = (await web.get("/", params={"q": "volcano"})).text
    assert "3 councils match “volcano”" in page
    assert page.count('<p class="snippet">') == 3 and "<mark>volcanoes</mark> erupt" in page
    twin = (await web.get("/", params={"q": "volcano"}, headers=JSON)).json()
    assert twin["matches"] == 3 and "volcanoes" in twin["councils"][0]["snippet"]


async def test_the_answer_has_a_copy_button_and_its_code_is_highlighted_on_the_server(service, web):
    answer = "Use this:\n\n```python\ndef capital():\n    return 'Paris'  # surely\n```\n"
    await service.storage.save_result(council("c0de000000000001", answer=answer))
    page = await web.get("/c/c0de000000000001")
    assert 'data-copy="answer-source"' in page.text and "def capital():" in page.text  # the Markdown to copy
    final = page.text[page.text.index('id="answer"') : page.text.index("Stage 1")]
    assert '<span class="k">def</span>' in final and '<span class="s1">' in final
    assert re.findall(r"<script[^>]*>", page.text) == [
        re.search(r'<script src="/static/app.js\?v=\w+" defer>', page.text)[0]
    ]
    assert "script-src 'self'" in page.headers["content-security-policy"]


async def test_stop_asks_for_a_confirmation_and_synthesize_now_does_not(service, web, llm):
    from tests.llm_server import Hang

    llm.script("gamma", Hang())
    token = csrf_of((await web.get("/ask")).text)
    asked = await web.post("/ask", data={"question": "Slow?", "csrf_token": token})
    council_id = asked.headers["location"].removeprefix("/c/")
    ask = await web.post(f"/c/{council_id}/stop", data={"csrf_token": token, "action": "stop"})
    assert ask.status_code == 200 and "Stop this council?" in ask.text and 'name="confirm" value="yes"' in ask.text
    assert service.runs.get(council_id) is not None and not service.runs.get(council_id).done  # still running
    synthesized = await web.post(f"/c/{council_id}/stop", data={"csrf_token": token, "action": "synthesize"})
    assert synthesized.status_code == 303


async def test_text_too_slow_or_too_long_to_render_is_shown_as_plain_text_and_kept(service, web):
    slow = BOMB * 2  # four times the bomb's cost: well over the render budget on any machine
    await service.storage.save_result(council("b0b0000000000001", answer=slow))
    await service.storage.save_result(council("b0b0000000000002", answer="z" * 500_000))  # over the size budget
    page = await web.get("/c/b0b0000000000001")
    assert page.status_code == 200 and '<pre class="plain">*a *a' in page.text
    huge = await web.get("/c/b0b0000000000002")
    assert '<pre class="plain">zzz' in huge.text
    from bot.web.render import RENDERER, _key

    assert RENDERER.cache.get(_key(slow)) is not None  # rendered (or given up on) once: kept
    again = await web.get("/c/b0b0000000000001")
    assert again.text.count('<pre class="plain">') == page.text.count('<pre class="plain">')


async def test_history_counts_the_calls_an_answer_that_stood_as_written_made(service, web):
    await service.storage.save_result(stood_as_written("a070000000000001"))
    listed = (await web.get("/", headers=JSON)).json()["councils"]
    assert [c["calls"] for c in listed] == [2]
