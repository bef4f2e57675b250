"""The web council page of a refine council with a lens and of a Self-MoA council, as the browser and a
JSON client get it (uvicorn on loopback, httpx): the round line, the lens beside its member's answer,
the first answer and the revision, the samples line, the "Where they differ" panel, and every model
call, the revisions' too, in the timeline and the history's count."""

from __future__ import annotations

import httpx
import pytest
from markupsafe import escape

from core.models import Lens
from core.service import CouncilService
from tests import test_council
from tests.conftest import make_settings
from tests.test_council import CHAIR, M1, M2, M3, config, script
from tests.test_rounds import REVISED, WRONG, refine, run, scripts

server, router = test_council.server, test_council.router  # the fixtures
JSON = {"Accept": "application/json"}
ROUND = f"Round 1: {M2} moved toward {M1}; {M1} and {M3} held"


@pytest.fixture
async def web(server, tmp_path):
    from tests.web_app import serve_web

    service = await CouncilService.open(make_settings(server, tmp_path))
    async with serve_web(service) as url, httpx.AsyncClient(base_url=url, timeout=20) as client:
        yield service, client
    await service.aclose()


async def page(web, result) -> tuple[dict, str]:
    service, client = web
    await service.storage.save_result(result)
    twin = (await client.get(f"/c/{result.council_id}", headers=JSON)).json()
    return twin, (await client.get(f"/c/{result.council_id}")).text


def html_of(text: str) -> str:
    return str(escape(text))


async def test_a_refine_council_with_a_lens(server, router, web):
    script(server, scripts())
    _, result = await run(router, refine(rounds=1, lenses={M1: Lens(persona="p", preset="skeptic")}))
    twin, html = await page(web, result)
    deliberation = html[html.index('<ul class="deliberation">') :].split("</ul>", 1)[0]
    assert f"<li>{html_of(M1)}: lens: skeptic</li>" in deliberation and f"<li>{html_of(ROUND)}</li>" in deliberation
    assert "(first answers, then the revisions)" in html
    panel = html[html.index('data-tab-label="google/gemini-test"') :].split("</section>", 1)[0]
    assert html_of(WRONG) in panel and "<h4>After the revision rounds</h4>" in panel and html_of(REVISED) in panel
    lens = html[html.index('data-tab-label="openai/gpt-test"') :].split("</section>", 1)[0]
    assert '<p class="lens">lens: skeptic</p>' in lens
    differ = html[html.index('<section class="stage differ"') :].split("</section>", 1)[0]
    assert "Where they differ</h2>" in differ and "<h3>Only one member says</h3>" in differ
    assert html_of(f"{M2}: Sydney is the largest city and the financial centre of the country.") in differ
    # every call made: 3 answers, 3 revisions, 3 reviews, 1 synthesis
    assert "<span>ok · 10 calls" in html and html.count("<td>revision, round 1</td>") == 3
    council = twin["council"]
    assert [(r["model"], r["moved"], r["toward"]) for r in council["rounds"][0]["revisions"]][1] == (M2, True, [M1])
    assert council["request"]["config"]["lenses"][M1]["preset"] == "skeptic"
    assert council["disagreement"]["unique"]
    assert [c["role"] for c in twin["timeline"]].count("revision, round 1") == 3
    reviews = [c for c in twin["timeline"] if c["role"] == "review"]
    revisions = [c for c in twin["timeline"] if c["role"].startswith("revision")]
    assert min(c["start_s"] for c in reviews) >= max(c["start_s"] for c in revisions)  # the reviews read the revisions
    history = (await web[1].get("/", headers=JSON)).json()["councils"]
    assert [(c["council_id"], c["calls"]) for c in history] == [(result.council_id, 10)]


async def test_a_self_moa_council(server, router, web):
    script(server, scripts())
    _, result = await run(router, config(members=[M1], mode="self-moa", samples=3, sample_temperature=0.7))
    twin, html = await page(web, result)
    samples = f"3 samples of {M1}, aggregated by {CHAIR}"
    deliberation = html[html.index('<ul class="deliberation">') :].split("</ul>", 1)[0]
    assert f"<li>{html_of(samples)}</li>" in deliberation
    assert "self-moa mode" in html
    config_ = twin["council"]["request"]["config"]
    assert (config_["mode"], config_["samples"], config_["members"]) == ("self-moa", 3, [M1])
    assert [c["role"] for c in twin["timeline"]] == ["answer"] * 3 + ["synthesis"]  # samples, then the aggregation
