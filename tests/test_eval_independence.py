"""Effective independent votes and measured doubt: phi, ρ̄, n_eff, the most redundant seat, accuracy
by consensus band and the unsure threshold, each checked against a hand computation, first on
samples written out here, then on `council eval` runs on the scripted server (tests/eval_fakes.py)
with members that fail on the same items and members that fail independently."""

from __future__ import annotations

import importlib.util
import math

import pytest

from core.eval import doubt, independence
from core.eval.report import build
from core.models.doubt import UnsureThreshold, judge
from core.models.eval import EvalSample
from core.models.stages import Aggregate


def sample(config: str, item: int, correct: bool, answer: str | None = None, **extra) -> EvalSample:
    text = f"ANSWER: {answer if answer is not None else ('right' if correct else 'wrong')}"
    return EvalSample(config=config, item_id=f"i{item}", position=item, answer=text, correct=correct, calls=1, **extra)


def by_hand_phi(a: list[bool], b: list[bool]) -> float:
    """The 2×2 table's phi: (n11·n00 − n10·n01) / √(n1·· n0·· n·1 n·0)."""
    n11 = sum(1 for x, y in zip(a, b) if x and y)
    n00 = sum(1 for x, y in zip(a, b) if not x and not y)
    n10 = sum(1 for x, y in zip(a, b) if x and not y)
    n01 = sum(1 for x, y in zip(a, b) if not x and y)
    return (n11 * n00 - n10 * n01) / math.sqrt((n11 + n10) * (n01 + n00) * (n11 + n01) * (n10 + n00))


# --------------------------------------------------------------------------- by hand

A = [True, True, False, False, True, False, True, True]
B = [True, True, False, False, True, False, True, True]  # fails exactly where A fails
C = [True, False, True, False, True, False, False, True]


def test_phi_is_pearson_s_correlation_of_the_correctness():
    # A and C: n11=3 (items 0,4,7), n00=2 (3,5), n10=2 (1,6), n01=1 (2): (3·2 − 2·1)/√(5·3·4·4) = 4/√240
    assert independence.phi(A, C) == pytest.approx(4 / math.sqrt(240))
    assert independence.phi(A, C) == pytest.approx(by_hand_phi(A, C))
    assert independence.phi(A, B) == pytest.approx(1.0)
    assert independence.phi(A, [not x for x in A]) == pytest.approx(-1.0)
    assert independence.phi(A, [True] * 8) is None  # a constant has no correlation


def test_two_members_failing_on_the_same_items_are_worth_far_less_than_three_votes():
    samples = [sample(m, i, v[i]) for m, v in (("member:a", A), ("member:b", B), ("member:c", C)) for i in range(8)]
    names = ["member:a", "member:b", "member:c"]
    report = build("r", "d", names, samples, 8)
    votes, table = report.effective_votes, report.error_correlation
    assert votes is not None and table is not None
    rho = (1 + 2 * (4 / math.sqrt(240))) / 3  # phi(a,b)=1, phi(a,c)=phi(b,c)=4/√240
    assert votes.mean_correlation == pytest.approx(rho)
    assert votes.n_eff == pytest.approx(3 / (1 + 2 * rho))
    assert votes.n_eff < 1.6  # 1.49: well under 3
    assert table.members == names
    assert table.phi[0][1] == pytest.approx(1.0) and table.phi[1][2] == pytest.approx(4 / math.sqrt(240))
    # Removing a or b leaves {b or a, c}: ρ̄ = 0.258, n_eff = 2/1.258 = 1.59; removing c leaves the twins: 1.
    redundant = votes.most_redundant
    assert redundant is not None and redundant.seat == "member:a"  # the first of the two equal choices
    assert redundant.n_eff_without == pytest.approx(2 / (1 + 4 / math.sqrt(240)))
    # Majority of a, b, c: a and b always agree, so the vote is a's: 5/8. Without a: b and c split
    # on items 1, 2, 6, where the tie goes to the earlier member (b): b's 5/8 again.
    assert redundant.vote_accuracy == pytest.approx(5 / 8)
    assert redundant.vote_accuracy_without == pytest.approx(5 / 8)


def test_independent_members_are_worth_their_number():
    # Three members over the 8 rows of a full 2×2×2 table: pairwise phi 0 exactly, n_eff 3
    rows = [(x, y, z) for x in (True, False) for y in (True, False) for z in (True, False)]
    names = ["member:a", "member:b", "member:c"]
    samples = [sample(name, i, row[k]) for i, row in enumerate(rows) for k, name in enumerate(names)]
    votes = build("r", "d", names, samples, 8).effective_votes
    assert votes is not None
    assert votes.mean_correlation == pytest.approx(0.0)
    assert votes.n_eff == pytest.approx(3.0)


def test_fewer_than_two_members_or_constant_members_give_no_n_eff():
    assert build("r", "d", ["member:a"], [sample("member:a", 0, True)], 1).effective_votes is None
    samples = [sample("member:a", i, True) for i in range(4)] + [sample("member:b", i, i % 2 == 0) for i in range(4)]
    votes = build("r", "d", ["member:a", "member:b"], samples, 4).effective_votes
    assert votes is not None and votes.n_eff is None and votes.most_redundant is None


def test_accuracy_by_consensus_band_and_the_unsure_threshold():
    """Ten items: the council's consensus 10, 20, ..., 100; it is wrong on the four lowest, the
    best member wrong on items 5 and 9 only."""
    council = [sample("standard", i, i >= 4, consensus=10.0 * (i + 1), agreement_w=0.05 * i) for i in range(10)]
    member = [sample("member:a", i, i not in (5, 9)) for i in range(10)]
    report = build("r", "d", ["member:a", "standard"], [*member, *council], 10)
    [c] = report.consensus
    assert (c.config, c.measure, c.versus) == ("standard", "rubric", "member:a")
    # bands by rubric consensus: [0,40): items 0-2 (10,20,30); [40,70): 3-5; [70,100]: 6-9 (100 included)
    assert [(b.items, b.accuracy, b.best_member_accuracy) for b in c.rubric] == [
        (3, 0.0, 1.0),
        (3, pytest.approx(2 / 3), pytest.approx(2 / 3)),
        (4, 1.0, 0.75),
    ]
    # by W×100: 0, 5, ..., 45: all in [0,40) but items 8 and 9 (40, 45)
    assert [b.items for b in c.kendall_w] == [8, 2, 0]
    # Under t the council has i < t/10 - 1 items; below 5 items no threshold. t=55 (items 0-4): council
    # 1/5, member 5/5; t=65 (0-5): 2/6 vs 5/6; ... t=100 (0-8): 5/9 vs 8/9; t=101 (all): 6/10 vs 8/10.
    assert (c.unsure_below, c.unsure_items, c.unsure_accuracy) == (101, 10, pytest.approx(0.6))
    # Twenty items at consensus 5, 10, ..., 100: the council wrong on the six lowest, the member
    # right on the ten lowest only. Under t = 5k there are k−1 items: the council right on k−7 of
    # them, the member on min(k−1, 10). The council is below while k−7 < min(k−1, 10): up to k = 16
    # (t = 80: 9/15 against 10/15); at t = 85 both are 10/16, above it the council leads.
    council = [sample("standard", i, i >= 6, consensus=5.0 * (i + 1)) for i in range(20)]
    member = [sample("member:a", i, i < 10) for i in range(20)]
    [c] = build("r", "d", ["member:a", "standard"], [*member, *council], 20).consensus
    assert (c.unsure_below, c.unsure_items, c.unsure_accuracy) == (80, 15, pytest.approx(9 / 15))


def test_never_unsure_when_the_council_is_never_worse():
    council = [sample("standard", i, True, consensus=50.0) for i in range(10)]
    member = [sample("member:a", i, i % 2 == 0) for i in range(10)]
    [c] = build("r", "d", ["member:a", "standard"], [*member, *council], 10).consensus
    assert (c.unsure_below, c.unsure_items, c.unsure_accuracy) == (0, 0, None)


def test_a_result_is_unsure_under_its_threshold():
    threshold = UnsureThreshold(below=45, run="abc", accuracy=0.52, items=30)
    unsure = judge(Aggregate(entries=[], consensus=40.0, agreement_w=0.9), threshold)
    assert unsure is not None and (unsure.consensus, unsure.measure) == (40.0, "rubric")
    assert judge(Aggregate(entries=[], consensus=45.0), threshold) is None
    assert judge(Aggregate(entries=[], agreement_w=0.3), threshold).measure == "kendall_w"  # type: ignore[union-attr]
    assert judge(Aggregate(entries=[]), threshold) is None  # no figure, threshold under 101
    assert judge(None, UnsureThreshold(below=101)) is not None  # the setting's 101: always
    assert judge(None, UnsureThreshold(below=101, run="abc")) is None  # a run measured councils with a figure
    assert judge(Aggregate(entries=[], consensus=0.0), UnsureThreshold(below=0)) is None  # 0: never


def test_the_band_edges():
    assert doubt._in_band(40.0, 40, 70) and not doubt._in_band(40.0, 0, 40) and doubt._in_band(100.0, 70, 100)


# --------------------------------------------------------------------------- on the scripted server

pytestmark_eval = pytest.mark.skipif(importlib.util.find_spec("inspect_ai") is None, reason="inspect-ai not installed")


@pytestmark_eval
@pytest.mark.parametrize(
    "line_up, low, high",
    [
        # alpha and beta draw alike (the same `draw_as`): wrong on the same items
        ({"alpha": (0.7, "twin"), "beta": (0.7, "twin"), "gamma": (0.6, None)}, 1.3, 2.0),
        ({"alpha": (0.7, None), "beta": (0.65, None), "gamma": (0.6, None)}, 2.6, 3.4),
    ],
    ids=["two-fail-together", "independent"],
)
async def test_effective_votes_of_a_scripted_line_up(tmp_path, line_up, low, high):
    from core.eval.dataset import bundled
    from core.models.eval import EvalRequest
    from core.service import CouncilService
    from tests.conftest import make_settings
    from tests.eval_fakes import quiz_member
    from tests.llm_server import ScriptedLLMServer

    items = bundled().items
    models = {name: quiz_member(name, items, accuracy, draw_as) for name, (accuracy, draw_as) in line_up.items()}
    async with ScriptedLLMServer(models) as server:
        service = await CouncilService.open(make_settings(server, tmp_path, COUNCIL_MODELS="alpha,beta,gamma"))
        try:
            request = EvalRequest(
                configs="member:alpha,member:beta,member:gamma", limit=200, concurrency=8, log_dir=str(tmp_path / "l")
            )
            report = await service.evals.run(request)
            stored = await service.storage.evals.samples(report.run)
        finally:
            await service.aclose()
    names = ["member:alpha", "member:beta", "member:gamma"]
    correct = {
        name: [s.correct for s in sorted(stored, key=lambda s: s.position) if s.config == name] for name in names
    }
    pairs = [by_hand_phi(correct[a], correct[b]) for i, a in enumerate(names) for b in names[i + 1 :]]
    rho = sum(pairs) / 3
    votes = report.effective_votes
    assert votes is not None and report.error_correlation is not None
    assert votes.items == 200 and votes.members == 3
    assert votes.mean_correlation == pytest.approx(rho)
    assert votes.n_eff == pytest.approx(3 / (1 + 2 * rho))
    assert low < votes.n_eff < high
    assert report.error_correlation.phi[0][1] == pytest.approx(pairs[0])
    if line_up["alpha"][1] == "twin":
        assert pairs[0] == pytest.approx(1.0)
        assert votes.most_redundant is not None and votes.most_redundant.seat in ("member:alpha", "member:beta")


# --------------------------------------------------------------------------- chat history: agreement


def test_ballot_agreement_is_the_share_of_answer_pairs_two_reviewers_order_alike():
    from core.records.agreement import agreement, concordance

    # a ranks w > x > y > z; b ranks w > y > x > z: of the 6 pairs, only (x, y) is ordered apart
    assert concordance(["w", "x", "y", "z"], ["w", "y", "x", "z"]) == (5, 6)
    assert concordance(["w", "x"], ["y", "z"]) == (0, 0)  # nothing ranked in common
    ballots = [
        ("c1", "a", ["w", "x", "y", "z"]),
        ("c1", "b", ["w", "y", "x", "z"]),
        ("c1", "c", ["z", "y", "x", "w"]),  # a's order reversed: 0 of 6 alike with a, 1 of 6 with b
        ("c2", "a", ["x", "y"]),
        ("c2", "b", ["x", "y"]),  # 1 of 1
    ]
    found = agreement(ballots)
    assert found is not None and found.reviewers == ["a", "b", "c"]
    assert found.agreement[0][1] == pytest.approx((5 + 1) / (6 + 1)) == found.agreement[1][0]
    assert found.agreement[0][2] == 0.0 and found.agreement[1][2] == pytest.approx(1 / 6)
    assert found.pairs[0][1] == 7 and found.councils[0][1] == 2 and found.councils[0][2] == 1
    assert agreement([("c1", "a", ["x", "y"])]) is None  # one reviewer: no pair
