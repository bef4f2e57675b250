"""The chairman may check one fact (issue 33 part 5): with search on and reviewers that disagree,
the chairman names a query in the `CHECK:` line format, the engine searches once, and the results
join the sources, cited like the others and counted in the composition's sources share."""

from __future__ import annotations

import pytest

from core.engine.council import run_council
from core.engine.fact_check import read_check
from core.models import CouncilConfig, CouncilFinished, CouncilRequest
from core.models.search import SearchResult
from core.providers.router import ProviderRouter
from core.settings import Settings
from tests.llm_server import ByStage, RecordedRequest, Reply, ScriptedLLMServer, scoring_review
from tests.test_rubric import RUBRIC, VOCABULARY, partisan

FOUND = SearchResult(
    title="Lava", url="https://example.org/lava", snippet="Basaltic lava erupts at about 1200 degrees Celsius"
)
FIRST = SearchResult(title="Landscapes", url="https://example.org/land", snippet="Landscapes change over time")


def chairman(check: str | None):
    """Answers the check prompt with `check` (or NO CHECK), then writes a synthesis quoting the
    checked source when it was given."""

    def text(call: RecordedRequest) -> str:
        if "CHECK: <a short search query>" in call.user:
            return f"CHECK: {check}" if check else "NO CHECK"
        cited = f"{FOUND.snippet} [2]." if FOUND.snippet in call.user else ""
        return f"{VOCABULARY['alpha']} {cited}".strip()

    return ByStage(Reply("-"), Reply("-"), Reply(text))


@pytest.fixture
async def server():
    async with ScriptedLLMServer() as srv:
        yield srv


async def run(server, *, disputed: bool, check: str | None, sources=(FIRST,)):
    for model, favourite in (("alpha", "beta"), ("beta", "gamma"), ("gamma", "alpha")):
        score = partisan(favourite) if disputed else (lambda answer: dict.fromkeys(RUBRIC.criteria, 7))
        server.script(model, ByStage(Reply(VOCABULARY[model]), Reply(scoring_review(score)), Reply("x")))
    server.script("chair", chairman(check))
    searched: list[str] = []

    async def search(query: str) -> list[SearchResult]:
        searched.append(query)
        return [FOUND]

    settings = Settings(
        _env_file=None, LLM_BASE_URL=server.base_url, LLM_API_KEY="k", DATABASE_URL="sqlite:///:memory:"
    )
    router = ProviderRouter(settings)
    config = CouncilConfig(members=list(VOCABULARY), chairman="chair", member_timeout_s=10.0, rubric=RUBRIC)
    request = CouncilRequest(question="How hot is lava?", config=config, sources=list(sources))
    events = [e async for e in run_council(request, router, fact_search=search)]
    await router.aclose()
    assert isinstance(events[-1], CouncilFinished)
    return events[-1].result, searched


async def test_the_chairman_checks_a_disputed_fact_and_cites_it(server):
    result, searched = await run(server, disputed=True, check="basaltic lava eruption temperature")
    assert searched == ["basaltic lava eruption temperature"]
    assert [s.url for s in result.request.sources] == [FIRST.url, FOUND.url]  # numbered after the others
    assert "The chairman checked a disputed fact: “basaltic lava eruption temperature” (sources [2])." in result.notices
    synthesis_prompt = [r for r in server.requests_for("chair", stage=3) if "CHECK: <" not in r.user][-1].user
    assert "SOURCE 2" in synthesis_prompt and FOUND.snippet in synthesis_prompt
    assert "[2]" in result.synthesis.text
    assert result.composition["sources"] > 0.2 and result.composition["alpha"] > 0.4
    assert "fact_check_s" in result.timings


async def test_no_check_when_the_chairman_declines_or_nothing_was_disputed(server):
    result, searched = await run(server, disputed=True, check=None)
    assert searched == [] and len(result.request.sources) == 1
    assert not any("checked a disputed fact" in n for n in result.notices)
    server.requests.clear()
    result, searched = await run(server, disputed=False, check="anything")
    assert searched == [] and not any("CHECK: <" in r.user for r in server.requests)


async def test_no_check_without_search(server):
    result, searched = await run(server, disputed=True, check="anything", sources=())
    assert searched == [] and not any("CHECK: <" in r.user for r in server.requests)
    assert "fact_check_s" not in result.timings


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("CHECK: lava temperature", "lava temperature"),
        ("**CHECK:** `boiling point of water at altitude`", "boiling point of water at altitude"),
        ("NO CHECK", None),
        ("I would check the temperature.", None),
    ],
)
def test_read_check(text, query):
    assert read_check(text) == query


async def test_the_service_wires_its_search_backend_to_the_chairman(server, tmp_path):
    from core.models import Origin
    from core.service import CouncilService
    from tests.search_fakes import FakeHit, FakeSearxng

    for model, favourite in (("alpha", "beta"), ("beta", "gamma"), ("gamma", "alpha")):
        server.script(model, ByStage(Reply(VOCABULARY[model]), Reply(scoring_review(partisan(favourite))), Reply("x")))
    server.script("chair", chairman("lava temperature"))
    hits = [FakeHit(FOUND.title, FOUND.url, FOUND.snippet)]
    async with FakeSearxng(hits=hits) as searxng:
        settings = Settings(
            _env_file=None,
            LLM_BASE_URL=server.base_url,
            LLM_API_KEY="k",
            DATABASE_URL=f"sqlite:///{tmp_path}/c.db",
            COUNCIL_MODELS="alpha,beta,gamma",
            COUNCIL_CHAIRMAN="chair",
            COUNCIL_SEARCH="searxng",
            SEARXNG_URL=searxng.base_url,
        )
        service = await CouncilService.open(settings)
        try:
            run = await service.start_council("How hot is lava?", Origin(), search=True)
            result = await run.wait()
        finally:
            await service.aclose()
    queries = [r.query.get("q") for r in searxng.requests]
    assert queries == ["How hot is lava?", "lava temperature"]  # the council's search, then the chairman's
    assert any("The chairman checked a disputed fact: “lava temperature”" in n for n in result.notices)
    assert result.request.sources[-1].url == FOUND.url and result.composition["sources"] > 0
