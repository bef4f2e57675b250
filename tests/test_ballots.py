"""Ballot formats (text / JSON with fallback), weighted votes and minority views, through the real
engine over loopback HTTP (ScriptedLLMServer) and a real ProviderRouter."""

from __future__ import annotations

import json

import pytest

from bot.render_text import ranking_line
from core.engine import ballots
from core.engine.dissent import reason
from core.engine.weights import auto_weight
from core.models import CouncilRequest, ParseStatus
from core.models.voice import dissent_line, dissent_lines
from core.records.export import to_document, to_markdown
from core.service import CouncilService
from tests import test_council as engine
from tests.conftest import MEMBERS as MEMBERS_3
from tests.conftest import make_settings
from tests.factories import run_council_to_end
from tests.llm_server import (
    AnswersJSON,
    ByStage,
    RefusesJSON,
    Reply,
    council_member,
    in_reverse,
    ranking_review,
)
from tests.test_cli import council
from tests.test_council import (
    ANSWERS,
    CHAIR,
    M1,
    M2,
    M3,
    M4,
    MEMBERS,
    SYNTHESIS,
    config,
    members,
    review_of,
    script,
)
from tests.test_service import ORIGIN

server = engine.server  # the engine tests' fixtures: a scripted server, and a router to it
router = engine.router
ALPHABETICAL = sorted


@pytest.fixture(autouse=True)
def fresh_memory():
    ballots.TEXT_ONLY.clear()  # "remembered for the process": each test starts a new one
    yield
    ballots.TEXT_ONLY.clear()


def json_members(**overrides):
    scripts = {m: council_member(ANSWERS[m], ALPHABETICAL, json_ballots=True) for m in MEMBERS}
    scripts[CHAIR] = council_member(
        "chair", synthesis="The final answer of the council is Paris, as every member said."
    )
    scripts.update(overrides)
    return scripts


async def ask(router, **overrides):
    _, result = await run_council_to_end(
        router, CouncilRequest(question="Capital of France?", config=config(**overrides))
    )
    return result


async def test_text_is_the_default_and_asks_for_no_structured_output(server, router):
    script(server, json_members())
    result = await ask(router)
    assert {r.format for r in result.reviews} == {"text"}
    assert not any("response_format" in r.body for r in server.requests)
    assert [e["format"] for e in to_document(result)["stage2"]] == ["text"] * 4


async def test_json_ballots_are_asked_for_with_a_schema_and_read(server, router):
    script(server, json_members())
    result = await ask(router, ballot_format="json")
    assert {r.format for r in result.reviews} == {"json"}
    reviews = server.requests_for(stage=2)
    assert len(reviews) == 4
    schema = reviews[0].body["response_format"]
    assert schema["type"] == "json_schema"
    assert schema["json_schema"]["schema"]["required"] == ["evaluation", "ranking"]
    for r in result.reviews:
        assert r.ballot_labels == sorted(r.shown_labels) and r.parse_status is ParseStatus.COMPLETE
        assert r.text == "Response-by-response notes."  # the evaluation, not the JSON
    assert result.aggregate.ballots_used == 4


async def test_bare_letters_are_accepted(server, router):
    bare = ByStage(Reply(ANSWERS[M1]), AnswersJSON(Reply("unused"), in_reverse, bare=True), Reply("s"))
    script(server, json_members(**{M1: bare}))
    result = await ask(router, ballot_format="auto")
    own = review_of(result, M1)
    assert own.format == "json" and own.ballot_labels == list(reversed(own.shown_labels))


async def test_a_model_refusing_json_falls_back_to_text_and_is_remembered(server, router):
    refusing = ByStage(Reply(ANSWERS[M2]), RefusesJSON(Reply(ranking_review(ALPHABETICAL))), Reply("s"))
    script(server, json_members(**{M2: refusing}))
    result = await ask(router, ballot_format="json")
    review = review_of(result, M2)
    assert review.format == "text" and review.ballot_labels == sorted(review.shown_labels)
    assert review.error is None and result.status.value == "ok", result.notices
    first = server.requests_for(M2, stage=2)
    assert ["response_format" in r.body for r in first] == [True, False]
    assert review_of(result, M1).format == "json"

    server.requests.clear()
    again = await ask(router, ballot_format="json")
    assert review_of(again, M2).format == "text"
    assert ["response_format" in r.body for r in server.requests_for(M2, stage=2)] == [False]  # remembered


@pytest.mark.parametrize(
    "raw",
    [
        "{not json",
        '{"evaluation": "fine", "ranking": ["Response Z"]}',  # not shown
        '{"evaluation": "fine", "ranking": ["A", "Response A"]}',  # repeated
        '{"ranking": ["A"]}',  # no evaluation
    ],
)
async def test_an_invalid_json_ballot_is_asked_again_as_text(server, router, raw):
    text = Reply(ranking_review(in_reverse))
    script(server, json_members(**{M3: ByStage(Reply(ANSWERS[M3]), AnswersJSON(text, raw=raw), Reply("s"))}))
    result = await ask(router, ballot_format="json")
    review = review_of(result, M3)
    assert review.format == "text" and review.ballot_labels == list(reversed(review.shown_labels))
    assert M3 in ballots.TEXT_ONLY
    assert review.usage.completion_tokens > len(review.text.split())  # both calls are paid for


def test_auto_leaves_local_models_to_the_text_grammar():
    assert ballots.asks_json("auto", "openai/gpt-5.1")
    assert not ballots.asks_json("auto", "local:smollm2")
    assert ballots.asks_json("json", "local:smollm2")
    assert not ballots.asks_json("text", "openai/gpt-5.1")


async def test_weights_change_the_aggregate_and_are_reported(server, router):
    # M1, M2, M3 prefer A (M1's answer) when shown it; M4 alone prefers D... with weight 10, D wins.
    like = {m: council_member(ANSWERS[m], ALPHABETICAL) for m in MEMBERS}
    like[M4] = council_member(ANSWERS[M4], in_reverse_alphabet)
    like[CHAIR] = council_member("chair", synthesis=SYNTHESIS)
    script(server, like)
    plain = await ask(router, exclude_self_review=False)
    assert plain.aggregate.entries[0].model == M1 and plain.aggregate.method == "mean_rank"
    weights = {M1: 1.0, M2: 1.0, M3: 1.0, M4: 10.0}
    weighted = await ask(router, exclude_self_review=False, reviewer_weights=weights)
    assert weighted.aggregate.entries[0].model == M4 and weighted.aggregate.method == "weighted_mean_rank"
    assert to_document(weighted)["metadata"]["reviewer_weights"] == weights
    assert to_document(plain)["metadata"]["reviewer_weights"] == dict.fromkeys(MEMBERS, 1.0)


def in_reverse_alphabet(labels):
    return sorted(labels, reverse=True)


async def test_a_reviewer_against_the_consensus_is_a_minority_view(server, router):
    evaluation = (
        "Response A is solid. Response D gives the clearest reasoning and cites its source. Response B is thin."
    )

    contrarian = ranking_review(in_reverse_alphabet, preamble=evaluation)

    # The agreeing reviews come after the contrarian one: were they first, their three ballots would
    # settle first place and the chairman would start without it (a late review, told apart).
    agreeing = {
        m: ByStage(Reply(ANSWERS[m]), Reply(ranking_review(ALPHABETICAL), delay_s=0.5), Reply(f"Synthesis by {m}."))
        for m in (M1, M3, M4)
    }
    contrarian_member = council_member(ANSWERS[M2], raw_review=contrarian)
    script(server, members(**{M2: contrarian_member, **agreeing}, ranking=ALPHABETICAL))
    result = await ask(router)
    assert not any(review.late for review in result.reviews)
    dissent = result.aggregate.dissent
    assert [d.reviewer for d in dissent] == [M2]
    d = dissent[0]
    assert d.preferred == M4 and d.preferred_label == "D" and d.tau is not None and d.tau < 0
    assert d.reason == "Response D gives the clearest reasoning and cites its source."
    assert to_document(result)["metadata"]["dissent"] == [{"reviewer": M2, "preferred": M4, "reason": d.reason}]
    line = dissent_line(d)
    assert M2 in line and "Response D" in line and d.reason in line
    assert result.aggregate.reviewer_tau[M1] > 0


async def test_agreeing_reviewers_leave_no_dissent(server, router):
    script(server, members(ranking=ALPHABETICAL))
    result = await ask(router)
    assert result.aggregate.dissent == []
    assert to_document(result)["metadata"]["dissent"] == []


def test_reason_picks_the_sentence_naming_the_preferred_answer():
    text = "**Overall** the answers differ. I prefer *Response C*: it is correct!\n\nFINAL RANKING:\n1. Response C"
    assert reason(text, "C") == "I prefer Response C: it is correct!"
    assert reason("First point. Second point.", "B") == "First point."
    assert reason("", "A") == ""
    long = "Response A " + "very " * 100 + "good."
    assert len(reason(long, "A")) <= 220 and reason(long, "A").endswith("…")


# --------------------------------------------------------------------------- configuration and interfaces


@pytest.mark.parametrize(
    ("weights", "says"),
    [
        ('{"nope/model": 2}', "names `nope/model`, which is no member's; the members are `alpha`, `beta`, `gamma`."),
        ("{bad json", "COUNCIL_REVIEWER_WEIGHTS: must be `auto` or a JSON object"),
        ('{"alpha": 0}', "COUNCIL_REVIEWER_WEIGHTS: weights must be positive numbers; not for alpha"),
    ],
)
async def test_bad_weights_are_a_one_line_configuration_error(tmp_path, llm, weights, says):
    code, _, err = await council(tmp_path, llm, "ask", "Q?", extra_env={"COUNCIL_REVIEWER_WEIGHTS": weights})
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


async def test_weights_of_a_member_its_endpoint_does_not_list_are_used_without_asking_it(tmp_path, llm):
    """Many proxies list fewer models than they serve. A weighted member is a
    member: no model list is fetched for the weights, and nothing refuses it."""
    llm.unlisted.add("alpha")
    code, out, err = await council(
        tmp_path, llm, "ask", "--json", "Q?", extra_env={"COUNCIL_REVIEWER_WEIGHTS": '{"alpha": 3}'}
    )
    assert code == 0, err
    assert json.loads(out)["metadata"]["reviewer_weights"] == {"alpha": 3.0, "beta": 1.0, "gamma": 1.0}
    assert llm.model_list_requests == 0


async def test_weights_naming_no_member_are_refused_without_asking_the_endpoint(tmp_path, llm):
    code, out, err = await council(
        tmp_path, llm, "ask", "Q?", extra_env={"COUNCIL_REVIEWER_WEIGHTS": '{"alpha": 2, "delta": 3}'}
    )
    assert (code, out) == (2, "")
    assert err == (
        "council: COUNCIL_REVIEWER_WEIGHTS names `delta`, which is no member's; "
        "the members are `alpha`, `beta`, `gamma`.\n"
    )
    assert llm.model_list_requests == 0 and llm.requests == []  # refused before any model was called


async def test_configured_weights_reach_the_json(tmp_path, llm):
    code, out, err = await council(
        tmp_path,
        llm,
        "ask",
        "--json",
        "Q?",
        extra_env={"COUNCIL_REVIEWER_WEIGHTS": '{"alpha": 3}', "COUNCIL_BALLOT_FORMAT": "json"},
    )
    assert code == 0, err
    document = json.loads(out)
    assert document["metadata"]["reviewer_weights"] == {"alpha": 3.0, "beta": 1.0, "gamma": 1.0}
    assert document["config"]["ballot_format"] == "json"
    # the scripted members answer a JSON request with text: each is asked again, in text
    assert {s["format"] for s in document["stage2"]} == {"text"}
    assert all(s["parsed_ranking"] for s in document["stage2"])


async def test_auto_weights_follow_stored_agreement(llm, tmp_path):
    # gamma always ranks against the others (reverse label order): its weight drops below 1.
    llm.script("gamma", council_member("gamma says 42.", in_reverse_alphabet, synthesis=SYNTHESIS))
    settings = make_settings(
        llm, tmp_path, COUNCIL_EXCLUDE_SELF="false", COUNCIL_REVIEWER_WEIGHTS="auto", RATE_LIMIT_USER_PER_HOUR=0
    )
    service = await CouncilService.open(settings)
    try:
        first = await service.ask("q0?", ORIGIN)
        assert first.request.config.reviewer_weights == dict.fromkeys(MEMBERS_3, 1.0)  # nothing stored yet
        for i in range(4):
            await service.ask(f"q{i + 1}?", ORIGIN)
        totals = await service.storage.reviewer_totals()  # what the next council is weighted by
        weights = (await service.ask("last?", ORIGIN)).request.config.reviewer_weights
        assert weights["gamma"] == pytest.approx(auto_weight(totals["gamma"].tau_sum, totals["gamma"].tau_n), abs=1e-4)
        assert weights["gamma"] < 1.0 < weights["alpha"]
    finally:
        await service.aclose()


def test_auto_weight_shrinks_toward_one():
    assert auto_weight(0.0, 0) == 1.0
    assert auto_weight(1.0, 1) == pytest.approx(1 + 1 / 11)
    assert auto_weight(100.0, 100) == pytest.approx(1 + 100 / 110)
    assert auto_weight(-100.0, 100) == 0.1  # never zero: a ballot always counts a little


async def test_the_minority_view_is_one_line_in_every_renderer(server, router):
    evaluation = "Response D is the one to trust. The others guess."
    contrarian = council_member(ANSWERS[M2], raw_review=ranking_review(in_reverse_alphabet, preamble=evaluation))
    script(server, members(**{M2: contrarian}, ranking=ALPHABETICAL))
    result = await ask(router)
    [line] = dissent_lines(result.aggregate)
    assert line.startswith(f"Minority view: {M2} preferred Response D ({M4})") and evaluation.split(". ")[0] in line
    assert line in ranking_line(result.aggregate)  # Slack and Discord show the ranking line
    assert f"> {line}" in to_markdown(result)


async def test_the_terminal_prints_the_minority_view(tmp_path, llm):
    llm.script("gamma", council_member("gamma says 42.", in_reverse_alphabet, synthesis=SYNTHESIS))
    code, out, err = await council(tmp_path, llm, "ask", "Q?", extra_env={"COUNCIL_EXCLUDE_SELF": "false"})
    assert code == 0, err
    assert "Minority view: gamma preferred Response C (gamma), placed 3 overall" in out


async def test_doctor_names_unknown_weighted_ids(tmp_path, llm):
    code, out, _ = await council(tmp_path, llm, "doctor", extra_env={"COUNCIL_REVIEWER_WEIGHTS": '{"typo-model": 2}'})
    assert code == 1 and "reviewer weights" in out and "typo-model" in out
