"""Where the final answer came from, measured (issue 33 part 4): the Rust measure against its
pure-Python reference, and end to end on the scripted server: members with distinct vocabularies,
a chairman that copies one member, one that mixes, one that cites a source, one of its own."""

from __future__ import annotations

import json
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.api.mcp_tools import _answer
from bot.api.openai_types import council_metadata
from core.models import CouncilConfig, CouncilRequest
from core.models.search import SearchResult
from core.models.voice import composition_line
from core.ranking import composition
from core.records.export import to_markdown
from tests import ranking_reference as ref
from tests.factories import run_council_to_end, scripted_router
from tests.llm_server import ByStage, Reply, ScriptedLLMServer, council_member
from tests.test_cli import council

VOCABULARY = {
    "alpha": "Volcanoes erupt basalt magma from the mantle beneath the crust.",
    "beta": "Glaciers carve deep fjords and leave long moraines behind them.",
    "gamma": "Rivers meander slowly and build wide deltas of fine silt.",
}
SOURCE = SearchResult(title="Tectonics", url="https://example.org/t", snippet="Plates drift apart at mid ocean ridges")
OWN = "In short the landscape is never finished and keeps changing over time."


def shares_sum_to_one(shares: dict[str, float]) -> bool:
    return math.isclose(sum(shares.values()), 1.0, abs_tol=1e-9)


@pytest.fixture
async def server():
    async with ScriptedLLMServer() as srv:
        for model, text in VOCABULARY.items():
            srv.script(model, council_member(text))
        yield srv


@pytest.fixture
async def router(server):
    r = scripted_router(server)
    yield r
    await r.aclose()


async def council_with_chairman(server, router, synthesis: str, **request):
    server.script("chair", ByStage(Reply("-"), Reply("-"), Reply(synthesis)))
    config = CouncilConfig(members=list(VOCABULARY), chairman="chair", member_timeout_s=10.0)
    _, result = await run_council_to_end(router, CouncilRequest(question="Landscapes?", config=config, **request))
    return result


async def test_a_chairman_that_copies_one_member(server, router):
    result = await council_with_chairman(server, router, VOCABULARY["beta"])
    shares = result.composition
    assert shares["beta"] == pytest.approx(1.0) and shares["chairman"] == pytest.approx(0.0)
    assert shares["alpha"] == shares["gamma"] == shares["sources"] == 0.0
    assert shares_sum_to_one(shares)


async def test_a_chairman_that_mixes_cites_and_adds_its_own(server, router):
    synthesis = f"{VOCABULARY['alpha']}\n{VOCABULARY['gamma']}\nAs the source says, {SOURCE.snippet}.\n{OWN}"
    result = await council_with_chairman(server, router, synthesis, sources=[SOURCE])
    shares = result.composition
    assert shares_sum_to_one(shares)
    assert shares["alpha"] > 0.2 and shares["gamma"] > 0.2 and shares["beta"] == 0.0
    assert 0.1 < shares["sources"] < shares["alpha"]
    assert shares["chairman"] > 0.2  # its own closing sentence and the words around the citation
    meter = composition_line(shares)
    assert meter.startswith("Composition ") and "chairman's own" in meter and "sources" in meter
    assert council_metadata(result)["composition"] == shares  # the API
    assert _answer(result, "x").composition == shares  # MCP
    assert meter in to_markdown(result)  # exports


async def test_ask_json_has_the_composition_and_the_terminal_shows_the_meter(tmp_path, llm):
    for model, text in VOCABULARY.items():  # beta chairs, and copies alpha's answer
        llm.script(model, council_member(text, synthesis=VOCABULARY["alpha"]))
    code, out, err = await council(tmp_path, llm, "ask", "--json", "Q?")
    assert code == 0, err
    shares = json.loads(out)["metadata"]["composition"]
    assert shares["alpha"] == pytest.approx(1.0) and set(shares) == {"alpha", "beta", "gamma", "sources", "chairman"}
    code, out, err = await council(tmp_path, llm, "ask", "Q?")
    assert code == 0, err
    assert "Composition ██████████ alpha 100% · chairman's own 0%" in out


def test_measure_matches_reference_on_examples():
    groups = [[VOCABULARY["alpha"]], [VOCABULARY["beta"]], [SOURCE.snippet, SOURCE.title]]
    text = f"{VOCABULARY['alpha']} {OWN}\n- {VOCABULARY['beta'][:30]}"
    measured = composition(text, groups)
    shares, own, sentences = ref.composition(text, groups)
    assert measured.shares == pytest.approx(shares) and measured.own == pytest.approx(own)
    assert [(s.start, s.end, s.words, s.support) for s in measured.sentences] == [
        (a, b, n, [(i, pytest.approx(c)) for i, c in sup]) for a, b, n, sup in sentences
    ]


WORDS = ["the", "rock", "ice", "river", "melts", "flows", "over", "é", "Été", "42", "a_b"]
PUNCT = [" ", " ", " ", ". ", "! ", "\n", ", ", "?", "."]


def _text(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(WORDS) + rng.choice(PUNCT) for _ in range(n))


def test_measure_matches_reference_on_random_texts():
    rng = random.Random(4)
    for _ in range(800):
        groups = [[_text(rng, rng.randint(0, 30)) for _ in range(rng.randint(0, 2))] for _ in range(rng.randint(0, 4))]
        text = _text(rng, rng.randint(0, 40))
        measured = composition(text, groups)
        shares, own, _ = ref.composition(text, groups)
        assert measured.shares == pytest.approx(shares) and measured.own == pytest.approx(own), (text, groups)
        assert math.isclose(sum(measured.shares) + measured.own, 1.0, abs_tol=1e-9)


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet="ab .\n!", max_size=60),
    st.lists(st.lists(st.text(alphabet="ab .", max_size=40), max_size=2), max_size=3),
)
def test_hypothesis_matches_reference(text, groups):
    measured = composition(text, groups)
    shares, own, _ = ref.composition(text, groups)
    assert measured.shares == pytest.approx(shares) and measured.own == pytest.approx(own)


def test_too_many_groups_is_a_value_error():
    with pytest.raises(ValueError):
        composition("a b c", [["x"]] * 65)
