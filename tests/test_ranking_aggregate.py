"""aggregate (weighted too) / aggregate_models / aggregate_many / kendall_w / kendall_tau: Rust against the
Python reference."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.ranking import CandidateScore, aggregate, aggregate_many, aggregate_models, kendall_tau, kendall_w
from tests import ranking_reference as ref


def test_classic_mean_rank_example():
    # 4 judges each rank the other 3; the true order is W > X > Y > Z.
    ballots = {"W": ["X", "Y", "Z"], "X": ["W", "Y", "Z"], "Y": ["W", "X", "Z"], "Z": ["W", "X", "Y"]}
    scores = aggregate(ballots, {m: m for m in "WXYZ"})
    assert [s.candidate for s in scores] == ["W", "X", "Y", "Z"]
    assert [round(s.average_rank, 2) for s in scores] == [1.00, 1.67, 2.33, 3.00]
    assert [s.position for s in scores] == [1, 2, 3, 4]
    assert [s.rankings_count for s in scores] == [3, 3, 3, 3]
    assert [s.first_place_votes for s in scores] == [3, 1, 0, 0]
    assert [s.borda for s in scores] == [6.0, 4.0, 2.0, 0.0]  # m - p summed
    assert [s.copeland for s in scores] == [3.0, 2.0, 1.0, 0.0]


def test_labels_map_to_models_and_exclude_self():
    label_to_model = {"A": "gpt", "B": "claude", "C": "gemini"}
    ballots = {"gpt": ["A", "B", "C"], "claude": ["B", "A", "C"], "gemini": ["C", "A", "B"]}
    kept = aggregate(ballots, label_to_model)
    assert kept == ref.aggregate(ballots, label_to_model)
    assert kept[0].candidate == "gpt"
    excluded = aggregate(ballots, label_to_model, exclude_self=True)
    assert excluded == ref.aggregate(ballots, label_to_model, exclude_self=True)
    # without self-votes the ballots are gpt: [claude, gemini], claude: [gpt, gemini], gemini: [gpt, claude]
    assert [(s.candidate, s.average_rank) for s in excluded] == [("gpt", 1.0), ("claude", 1.5), ("gemini", 2.0)]
    assert [s.rankings_count for s in excluded] == [2, 2, 2]
    assert excluded[1].first_place_votes == 1


def test_unranked_candidates_come_last_with_none():
    scores = aggregate_models([["b"]], ["a", "b", "c"])
    assert scores[0] == CandidateScore("b", 1, 1.0, 1, 0.0, 0.0, 1)
    assert [(s.candidate, s.average_rank, s.rankings_count) for s in scores[1:]] == [("a", None, 0), ("c", None, 0)]


def test_ties_are_broken_by_borda_then_copeland_then_name():
    # a, b, c all average 1.5; Borda a=2, c=2, b=1; Copeland a=2 (beats c, d), c=2 (beats b, d), b=1;
    # first places a=1, c=1; so the name decides a before c.
    ballots = [["a", "c", "d"], ["b", "a"], ["c", "b"]]
    scores = aggregate_models(ballots, ["a", "b", "c", "d"])
    assert scores == ref.aggregate_models(ballots, ["a", "b", "c", "d"])
    assert [s.candidate for s in scores] == ["a", "c", "b", "d"]
    assert [(s.borda, s.copeland) for s in scores] == [(2.0, 2.0), (2.0, 2.0), (1.0, 1.0), (0.0, 0.0)]
    assert aggregate_models([], ["z", "y", "x"])[0].candidate == "x"


def test_aggregate_many_equals_one_by_one():
    rng = random.Random(5)
    councils = [_random_council(rng) for _ in range(200)]
    many = aggregate_many(councils, exclude_self=True)
    assert many == [aggregate(b, m, exclude_self=True) for b, m in councils]


def _random_council(rng: random.Random):
    k = rng.randint(1, 6)
    models = [f"model-{i}" for i in rng.sample(range(20), k)]
    labels = "ABCDEF"[:k]
    label_to_model = dict(zip(labels, models))
    ballots = {}
    for reviewer in rng.sample(models, rng.randint(0, k)):
        ballot = rng.sample(labels, rng.randint(0, k))
        ballots[reviewer] = ballot
    return ballots, label_to_model


def test_matches_reference_on_thousands_of_random_councils():
    rng = random.Random(2024)
    for _ in range(4000):
        ballots, label_to_model = _random_council(rng)
        for exclude_self in (False, True):
            assert aggregate(ballots, label_to_model, exclude_self=exclude_self) == ref.aggregate(
                ballots, label_to_model, exclude_self=exclude_self
            )


def test_weighted_aggregate_matches_reference():
    rng = random.Random(12)
    for _ in range(2000):
        ballots, label_to_model = _random_council(rng)
        # dyadic weights: every sum is exact, so Rust and Python agree to the bit
        weights = {r: rng.choice([0.25, 0.5, 1.0, 1.5, 2.0, 4.0]) for r in ballots if rng.random() < 0.7}
        assert aggregate(ballots, label_to_model, weights=weights) == ref.aggregate(
            ballots, label_to_model, weights=weights
        )


def test_unit_weights_are_the_unweighted_aggregate():
    rng = random.Random(3)
    for _ in range(500):
        ballots, label_to_model = _random_council(rng)
        units = dict.fromkeys(ballots, 1.0)
        assert aggregate(ballots, label_to_model, weights=units) == aggregate(ballots, label_to_model)


def test_a_heavy_reviewer_turns_a_two_to_one_majority():
    ballots = {"r1": ["A", "B"], "r2": ["B", "A"], "r3": ["B", "A"]}
    label_to_model = {"A": "a", "B": "b"}
    assert aggregate(ballots, label_to_model)[0].candidate == "b"
    top = aggregate(ballots, label_to_model, weights={"r1": 3})[0]
    assert (top.candidate, top.average_rank, top.borda, top.rankings_count) == ("a", 7 / 5, 3.0, 3)


@pytest.mark.parametrize("weight", [0.0, -1.0, float("nan"), float("inf")])
def test_non_positive_weights_raise_value_error(weight):
    with pytest.raises(ValueError):
        aggregate({"r1": ["A"]}, {"A": "a"}, weights={"r1": weight})


def test_kendall_tau_matches_reference():
    rng = random.Random(8)
    reference = [f"m{i}" for i in range(6)]
    for _ in range(2000):
        ballot = rng.sample([*reference, "x", "y"], rng.randint(0, 8))
        got, expected = kendall_tau(ballot, reference), ref.kendall_tau(ballot, reference)
        assert got == (None if expected is None else pytest.approx(expected))
    assert kendall_tau(["m0", "m1"], reference) == 1.0
    assert kendall_tau(["m1", "m0"], reference) == -1.0
    assert kendall_tau(["m1"], reference) is None


def _random_ballots(rng: random.Random, candidates: list[str], m: int) -> list[list[str]]:
    return [rng.sample(candidates, rng.randint(0, len(candidates))) for _ in range(m)]


def test_kendall_w_matches_reference_on_random_ballots():
    rng = random.Random(7)
    for _ in range(4000):
        candidates = [f"c{i}" for i in range(rng.randint(0, 7))]
        ballots = _random_ballots(rng, candidates, rng.randint(0, 8))
        got, want = kendall_w(ballots, candidates), ref.kendall_w(ballots, candidates)
        if want is None:
            assert got is None
        else:
            assert got == pytest.approx(want, abs=1e-12)
            assert 0.0 <= got <= 1.0


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.permutations(["a", "b", "c", "d", "e"]).map(lambda p: p[: len(p)]), min_size=0, max_size=12),
    st.randoms(use_true_random=False),
)
def test_invariant_to_ballot_order(ballots, rnd):
    candidates = ["a", "b", "c", "d", "e"]
    trimmed = [b[: rnd.randint(0, 5)] for b in ballots]
    shuffled = trimmed[:]
    rnd.shuffle(shuffled)
    assert aggregate_models(trimmed, candidates) == aggregate_models(shuffled, candidates)
    w1, w2 = kendall_w(trimmed, candidates), kendall_w(shuffled, candidates)
    assert (w1 is None and w2 is None) or w1 == pytest.approx(w2, abs=1e-12)
    assert aggregate_models(trimmed, candidates) == ref.aggregate_models(trimmed, candidates)


def test_kendall_w_extremes():
    candidates = ["a", "b", "c", "d"]
    assert kendall_w([candidates] * 5, candidates) == 1.0
    assert kendall_w([candidates, candidates[::-1]], candidates) == 0.0
    rng = random.Random(3)
    random_w = kendall_w([rng.sample(candidates, 4) for _ in range(2000)], candidates)
    assert random_w < 0.01
    assert kendall_w([candidates], candidates) is None
    assert kendall_w([["a"]] * 3, ["a"]) is None
    # partial ballots: unranked candidates tie at the mean of the remaining positions
    w = kendall_w([["a"], ["a", "b"], ["a", "b", "c"]], candidates)
    assert w == pytest.approx(ref.kendall_w([["a"], ["a", "b"], ["a", "b", "c"]], candidates))
    assert not math.isnan(w) and 0.5 < w <= 1.0


@pytest.mark.parametrize(
    "call",
    [
        lambda: aggregate({"r": ["A", "A"]}, {"A": "x"}),
        lambda: aggregate({"r": ["Q"]}, {"A": "x"}),
        lambda: aggregate({}, {"A": "x", "B": "x"}),
        lambda: aggregate_models([["a", "zz"]], ["a", "b"]),
        lambda: aggregate_models([], ["a", "a"]),
        lambda: kendall_w([["a", "a"]], ["a", "b"]),
        lambda: kendall_w([["q"]], ["a", "b"]),
    ],
)
def test_invalid_values_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: aggregate([("r", ["A"])], {"A": "x"}),
        lambda: aggregate({"r": "A"}, {"A": "x"}),
        lambda: aggregate({"r": [1]}, {"A": "x"}),
        lambda: aggregate_models(["ab"], ["a", "b"]),
        lambda: aggregate_models([["a"]], "ab"),
        lambda: kendall_w(None, ["a"]),
    ],
)
def test_wrong_types_raise_type_error(call):
    with pytest.raises(TypeError):
        call()
