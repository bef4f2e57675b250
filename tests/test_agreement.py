"""Agreement between reviewers who rank only what they were shown, minority views that need a ballot
that disagrees, and the composition of an answer a stand-in wrote: through the real engine over
loopback HTTP (ScriptedLLMServer), and the terminal."""

from __future__ import annotations

import pytest

from bot.render_text import ranking_line
from core.models import CouncilConfig, CouncilRequest, CouncilStatus
from core.models.voice import result_composition_line
from core.ranking import kendall_w
from core.records.export import to_markdown
from tests import ranking_reference as ref
from tests.factories import run_council_to_end, scripted_router
from tests.llm_server import ByStage, Fail, Reply, ScriptedLLMServer, council_member, shown_answers
from tests.test_cli import council

ORDER = ["alpha", "beta", "gamma"]
# Reviewers see no model id (prompts redact them): each answer is known by its own word.
WORDS = {"alpha": "basalt", "beta": "fjords", "gamma": "deltas"}
ANSWERS = {m: f"The answer is 42, as the {word} show." for m, word in WORDS.items()}


def by_author(call) -> str:
    """A review that ranks the answers it was shown in the one order alpha > beta > gamma."""
    shown = shown_answers(call.user)
    author = {label: next(m for m in ORDER if WORDS[m] in text) for label, text in shown.items()}
    ranked = sorted(shown, key=lambda label: ORDER.index(author[label]))
    lines = "\n".join(f"{i}. Response {label}" for i, label in enumerate(ranked, 1))
    return f"Notes on each response.\n\nFINAL RANKING:\n{lines}"


@pytest.fixture
async def server():
    async with ScriptedLLMServer() as srv:
        for m in ORDER:
            srv.script(
                m,
                council_member(
                    ANSWERS[m], raw_review=by_author, synthesis=f"Forty two it is, concludes {m} after much thought."
                ),
            )
        yield srv


@pytest.fixture
async def router(server):
    r = scripted_router(server)
    yield r
    await r.aclose()


async def ask(router, chairman: str = "alpha"):
    config = CouncilConfig(members=list(ORDER), chairman=chairman, member_timeout_s=10.0, exclude_self_review=True)
    _, result = await run_council_to_end(router, CouncilRequest(question="Six times seven?", config=config))
    return result


async def test_three_consistent_partial_ballots_agree(server, router):
    result = await ask(router)
    reviews = {r.reviewer: r.ballot_models for r in result.reviews}
    assert reviews == {"alpha": ["beta", "gamma"], "beta": ["alpha", "gamma"], "gamma": ["alpha", "beta"]}
    assert result.aggregate.agreement_w is not None and result.aggregate.agreement_w >= 0.9
    assert result.aggregate.dissent == []
    assert "agreement W=1.00" in ranking_line(result.aggregate)  # Slack and Discord show this line
    # the textbook W over all candidates reads each unseen own answer as tied last
    assert kendall_w(list(reviews.values()), ORDER) == pytest.approx(1 / 9)


async def test_a_degraded_council_invents_no_minority_view(server, router):
    server.script("gamma", Fail(500, "down"))
    result = await ask(router)
    assert result.status is CouncilStatus.DEGRADED
    assert {r.reviewer: r.ballot_models for r in result.reviews if r.ballot_models} == {
        "alpha": ["beta"],
        "beta": ["alpha"],
    }
    # each reviewer was shown one answer: nothing to agree or disagree on
    assert result.aggregate.agreement_w is None
    assert result.aggregate.dissent == []
    assert "Minority view" not in to_markdown(result) and "W=0.00" not in ranking_line(result.aggregate)


def test_partial_ballots_match_the_reference():
    candidates = ["a", "b", "c", "d"]
    cases = [
        ([["b", "c", "d"], ["a", "c", "d"], ["a", "b", "d"], ["a", "b", "c"]], None),
        ([["b", "c", "d"], ["a", "c", "d"], ["a", "b", "d"], ["c", "b", "a"]], None),
        ([["b"], ["a", "c"], ["d", "a"]], [["b", "c"], ["a", "c", "d"], ["a", "d"]]),
        ([["a"], ["a", "b"], ["b", "a", "c", "d"]], None),
    ]
    for ballots, shown in cases:
        shown = shown or ballots
        assert kendall_w(ballots, candidates, shown) == pytest.approx(ref.kendall_w(ballots, candidates, shown))
    consistent, contrary = (kendall_w(b, candidates, b) for b, _ in cases[:2])
    assert consistent == 1.0 and contrary is not None and contrary < 0.9
    with pytest.raises(ValueError):
        kendall_w([["a", "b"]], candidates, [["a"]])  # ranks what it was not shown
    with pytest.raises(ValueError):
        kendall_w([["a"], ["b"]], candidates, [["a"]])  # one shown set per ballot


async def test_a_stand_in_owns_its_share_of_the_answer(server, router):
    server.script("chair", Fail(500, "down"))
    result = await ask(router, chairman="chair")
    synthesis = result.synthesis
    assert synthesis.stood_in and synthesis.model == "alpha"  # the top-ranked member
    shares = result.composition
    assert "chairman" not in shares and shares["alpha"] == pytest.approx(1.0)
    line = result_composition_line(result)
    assert line is not None and "chairman" not in line and line.endswith("alpha's own 100%")
    assert line in to_markdown(result)


async def test_the_terminal_names_the_stand_in_in_the_meter(tmp_path):
    async with ScriptedLLMServer() as llm:
        for m in ORDER:
            llm.script(
                m,
                council_member(
                    ANSWERS[m], raw_review=by_author, synthesis=f"Forty two it is, concludes {m} after much thought."
                ),
            )
        llm.script("beta", ByStage(Reply(ANSWERS["beta"]), Reply(by_author), Fail(500, "down")))
        code, out, err = await council(tmp_path, llm, "ask", "Q?")
    assert code == 0, err
    assert "alpha's own" in out and "chairman's own" not in out
    assert "Kendall's W: 1.00" in out
