"""Rubric scores and the consensus meter end to end (issue 33): reviewers on the scripted server
score each answer, the engine reads the scores (text and JSON ballots), the aggregate holds each
answer's means and the consensus, a low consensus reaches the chairman's prompt, and every
interface and `council ask --json` show them."""

from __future__ import annotations

import json
import sqlite3

import pytest

from bot.api.mcp_tools import _answer
from bot.api.openai_types import council_metadata
from bot.discord.render import agreement_text
from bot.render_text import aggregate_table, ballot_line, ranking_line
from core.models import CouncilConfig, CouncilRequest, Rubric
from core.models.rubric import parse_rubric
from core.records.export import to_markdown
from tests.factories import run_council_to_end, scripted_router
from tests.llm_server import AnswersJSON, ByStage, Reply, ScriptedLLMServer, scoring_review
from tests.test_cli import council

# Members with distinct vocabularies: a reviewer recognises whose answer it reads by its words.
VOCABULARY = {
    "alpha": "Volcanoes erupt basalt magma from the mantle.",
    "beta": "Glaciers carve fjords and leave moraines behind.",
    "gamma": "Rivers meander and build deltas of silt.",
}
CHAIR = "chair"
RUBRIC = Rubric(criteria=["accuracy", "insight", "completeness"])


def author(answer: str) -> str:
    return next(m for m, text in VOCABULARY.items() if text in answer)


def fair(answer: str) -> dict[str, float]:
    """Every reviewer agrees: alpha's answer is best, gamma's worst."""
    base = {"alpha": 9, "beta": 6, "gamma": 3}[author(answer)]
    return {"accuracy": base, "insight": base - 1, "completeness": base}


def partisan(favourite: str):
    """A reviewer that gives `favourite` 10 and everyone else 1."""
    return lambda answer: {c: 10 if author(answer) == favourite else 1 for c in RUBRIC.criteria}


def member(model: str, score, *, json_ballots: bool = False) -> ByStage:
    review = Reply(scoring_review(score))
    return ByStage(
        Reply(VOCABULARY[model]),
        AnswersJSON(review, score=score) if json_ballots else review,
        Reply("synthesis"),
    )


@pytest.fixture
async def server():
    async with ScriptedLLMServer() as srv:
        srv.script(CHAIR, ByStage(Reply("-"), Reply("-"), Reply(VOCABULARY["alpha"] + " That is the answer.")))
        yield srv


@pytest.fixture
async def router(server):
    r = scripted_router(server)
    yield r
    await r.aclose()


def request(**config) -> CouncilRequest:
    values = dict(members=list(VOCABULARY), chairman=CHAIR, member_timeout_s=10.0, rubric=RUBRIC)
    return CouncilRequest(question="What shapes landscapes?", config=CouncilConfig(**(values | config)))


async def test_agreeing_reviewers_give_means_and_full_consensus(server, router):
    for model in VOCABULARY:
        server.script(model, member(model, fair))
    _, result = await run_council_to_end(router, request())
    aggregate = result.aggregate
    assert aggregate.scores == {
        "alpha": {"accuracy": 9.0, "insight": 8.0, "completeness": 9.0},
        "beta": {"accuracy": 6.0, "insight": 5.0, "completeness": 6.0},
        "gamma": {"accuracy": 3.0, "insight": 2.0, "completeness": 3.0},
    }
    assert aggregate.consensus == 100.0
    review = next(r for r in result.reviews if r.reviewer == "beta")
    alpha_label = next(a.label for a in result.answers if a.model == "alpha")
    assert review.scores[alpha_label] == {"accuracy": 9.0, "insight": 8.0, "completeness": 9.0}
    prompt = server.requests_for("alpha", stage=2)[0].user
    assert "Response X: Accuracy=N, Insight=N, Completeness=N" in prompt
    chair = server.requests_for(CHAIR, stage=3)[0].user
    assert "reviewers disagreed" not in chair


async def test_partisan_reviewers_give_low_consensus_and_the_chairman_is_told(server, router):
    # each reviewer loves one other member's answer: every answer gets a 10 and a 1
    for model, favourite in (("alpha", "beta"), ("beta", "gamma"), ("gamma", "alpha")):
        server.script(model, member(model, partisan(favourite)))
    _, result = await run_council_to_end(router, request())
    assert result.aggregate.consensus == 0.0
    assert result.aggregate.scores["alpha"] == {"accuracy": 5.5, "insight": 5.5, "completeness": 5.5}
    chair = server.requests_for(CHAIR, stage=3)[0].user
    assert "The reviewers disagreed (consensus 0/100" in chair
    assert "(scored 1 to 10)" in chair and "Address those disagreements explicitly" in chair


async def test_json_ballots_carry_scores(server, router):
    for model in VOCABULARY:
        server.script(model, member(model, fair, json_ballots=True))
    _, result = await run_council_to_end(router, request(ballot_format="json"))
    assert {r.format for r in result.reviews} == {"json"}
    assert result.aggregate.scores["gamma"] == {"accuracy": 3.0, "insight": 2.0, "completeness": 3.0}
    assert result.aggregate.consensus == 100.0
    schema = server.requests_for("alpha", stage=2)[0].body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["scores"]["items"]["required"] == ["response", *RUBRIC.criteria]


async def test_no_rubric_asks_for_no_scores(server, router):
    for model in VOCABULARY:
        server.script(model, member(model, fair))
    _, result = await run_council_to_end(router, request(rubric=None))
    assert result.aggregate.consensus is None and result.aggregate.scores == {}
    assert all(not r.scores for r in result.reviews)
    assert "score every response" not in server.requests_for("alpha", stage=2)[0].user


async def test_every_interface_shows_the_consensus_beside_w(server, router):
    for model in VOCABULARY:
        server.script(model, member(model, fair))
    _, result = await run_council_to_end(router, request())
    assert "consensus 100/100 (high)" in ranking_line(result.aggregate)  # Slack, API transcript
    table = aggregate_table(result.aggregate)  # terminal, Discord, Slack's modal
    assert "consensus 100/100" in table and "scores alpha: accuracy 9.0 · insight 8.0 · completeness 9.0" in table
    assert "rubric consensus 100/100 (high)" in agreement_text(result)  # Discord's field
    assert "Scores of Response" in ballot_line(result.reviews[0])
    metadata = council_metadata(result)  # the OpenAI-compatible API
    assert metadata["consensus"] == 100.0 and metadata["scores"]["beta"]["accuracy"] == 6.0
    mcp = _answer(result, "text")
    assert mcp.consensus == 100.0 and mcp.scores["gamma"]["insight"] == 2.0
    markdown = to_markdown(result)  # exports
    assert "rubric consensus 100/100 (high)" in markdown and "| alpha | 9.0 | 8.0 | 9.0 |" in markdown


async def test_ask_json_has_scores_and_consensus_and_they_are_stored(tmp_path, llm):
    for model in VOCABULARY:
        llm.script(model, member(model, fair))
    code, out, err = await council(
        tmp_path,
        llm,
        "ask",
        "--json",
        "Q?",
        extra_env={"COUNCIL_MODELS": "alpha,beta,gamma", "COUNCIL_CHAIRMAN": "beta"},
    )
    assert code == 0, err
    metadata = json.loads(out)["metadata"]
    assert metadata["scores"]["alpha"] == {"accuracy": 9.0, "insight": 8.0, "completeness": 9.0}
    assert metadata["consensus"] == 100.0 and metadata["rubric"]["criteria"] == RUBRIC.criteria
    with sqlite3.connect(tmp_path / "cli.db") as db:
        (consensus,) = db.execute("SELECT consensus FROM councils").fetchone()
        stored = [json.loads(s) for (s,) in db.execute("SELECT scores FROM reviews")]
    assert consensus == 100.0 and all(len(s) == 2 for s in stored)
    code, out, err = await council(tmp_path, llm, "history")
    assert code == 0 and "consensus 100" in out, err


async def test_rubric_off_and_custom_from_the_environment(tmp_path, llm):
    code, out, err = await council(tmp_path, llm, "ask", "--json", "Q?", extra_env={"COUNCIL_RUBRIC": "off"})
    assert code == 0, err
    assert json.loads(out)["metadata"]["consensus"] is None
    assert "score every response" not in llm.requests_for("alpha", stage=2)[0].user
    code, out, err = await council(tmp_path, llm, "ask", "Q?", extra_env={"COUNCIL_RUBRIC": "clarity, depth: 1-5"})
    assert code == 0, err
    assert "from 1 to 5 (whole numbers) on each of: clarity, depth" in llm.requests_for("alpha", stage=2)[-1].user
    code, _, err = await council(tmp_path, llm, "ask", "Q?", extra_env={"COUNCIL_RUBRIC": "clarity: 5-1"})
    assert code != 0 and "COUNCIL_RUBRIC" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", None),
        ("off", None),
        ("Accuracy, Insight", Rubric(criteria=["accuracy", "insight"])),
        ("factual_accuracy, clarity: 0-4", Rubric(criteria=["factual accuracy", "clarity"], low=0, high=4)),
    ],
)
def test_parse_rubric(text, expected):
    assert parse_rubric(text) == expected


@pytest.mark.parametrize("bad", ["a, a", "a+b", "a: 3-3", ", ,"])
def test_parse_rubric_refuses(bad):
    with pytest.raises(ValueError, match="COUNCIL_RUBRIC"):
        parse_rubric(bad)
