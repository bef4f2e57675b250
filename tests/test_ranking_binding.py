"""The native module core._ranking directly: tuple results, batch entry points, threads."""

from __future__ import annotations

import random

import pytest

from core import _ranking, ranking
from tests.test_ranking_aggregate import _random_council


def test_tuple_results_match_the_dataclasses():
    ballots, label_to_model = {"x": ["A", "B"], "y": ["B"]}, {"A": "x", "B": "y"}
    rows = _ranking.aggregate(ballots, label_to_model, False)
    assert [ranking.CandidateScore(*r) for r in rows] == ranking.aggregate(ballots, label_to_model)
    # pairs are accepted as well as dicts
    assert _ranking.aggregate(list(ballots.items()), list(label_to_model.items()), False) == rows
    assert _ranking.parse_ranking("FINAL RANKING: B > A", ["A", "B"]) == (["B", "A"], "complete")
    assert (
        ranking.Rating(*_ranking.leaderboard([["a", "b"]], 5, 0, 0.9)[0])
        == ranking.leaderboard([["a", "b"]], rounds=5, seed=0, confidence=0.9)[0]
    )


def test_parse_many_equals_per_call():
    texts = ["FINAL RANKING:\n1. Response B\n2. Response A", "nothing", "FINAL RANKING: A", ""] * 50
    labels = ["A", "B"]
    many = _ranking.parse_many(texts, labels, ranking.ParsedRanking)
    assert many == [ranking.parse_ranking(t, labels) for t in texts]


def test_aggregate_batch_errors_name_the_problem():
    with pytest.raises(ValueError, match="unknown label"):
        _ranking.aggregate_batch([({"r": ["Z"]}, {"A": "m"})], False)


def test_results_are_the_callers_string_objects():
    model = "".join(["mo", "del-x"])  # a fresh str object
    scores = ranking.aggregate({"r": ["A"]}, {"A": model})
    assert scores[0].candidate is model


def test_leaderboard_threads_do_not_change_results():
    rng = random.Random(8)
    models = ["a", "b", "c", "d"]
    ballots = [rng.sample(models, rng.randint(2, 4)) for _ in range(2000)]
    assert _ranking.leaderboard(ballots, 64, 5, 0.95, 1) == _ranking.leaderboard(ballots, 64, 5, 0.95, 2)


def test_many_random_councils_through_the_batch_entry():
    rng = random.Random(9)
    councils = [_random_council(rng) for _ in range(500)]
    assert ranking.aggregate_many(councils) == [ranking.aggregate(b, m) for b, m in councils]


def test_frozen_dataclasses_stay_frozen():
    score = ranking.aggregate({}, {"A": "m"})[0]
    with pytest.raises(AttributeError):
        score.position = 3  # type: ignore[misc]
    assert hash(ranking.parse_ranking("x", ["A"]).status)
