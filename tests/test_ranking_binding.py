"""The native module core._ranking directly: its result classes, the one aggregate entry, batches, threads."""

from __future__ import annotations

import random

import pytest

from core import _ranking, ranking
from tests.test_ranking_aggregate import _random_council


def test_results_are_frozen_classes_that_compare_and_print_like_dataclasses():
    ballots, label_to_model = {"x": ["A", "B"], "y": ["B"]}, {"A": "x", "B": "y"}
    rows = _ranking.aggregate(ballots, label_to_model=label_to_model)
    assert rows == ranking.aggregate(ballots, label_to_model)
    assert type(rows[0]) is ranking.CandidateScore is _ranking.CandidateScore
    assert rows[0] == ranking.CandidateScore("x", 1, 1.0, 1, 1.0, 1.0, 1) and rows[0] != rows[1]
    assert repr(rows[0]) == (
        "CandidateScore(candidate='x', position=1, average_rank=1.0, rankings_count=1, borda=1.0, copeland=1.0, "
        "first_place_votes=1)"
    )
    assert hash(rows[0]) == hash(ranking.CandidateScore("x", 1, 1.0, 1, 1.0, 1.0, 1))
    # pairs are accepted as well as dicts
    assert _ranking.aggregate(list(ballots.items()), label_to_model=list(label_to_model.items())) == rows
    parsed = _ranking.parse_ranking("FINAL RANKING: B > A", ["A", "B"])
    assert (parsed.order, parsed.status) == (["B", "A"], "complete") and parsed == ranking.ParsedRanking(
        ["B", "A"], "complete"
    )
    assert repr(parsed) == "ParsedRanking(order=['B', 'A'], status='complete')"
    [rating] = _ranking.leaderboard([["a"]], 5, 0, 0.9)
    assert rating == ranking.Rating("a", 1000.0, 1000.0, 1000.0, 0.0, 0)
    assert repr(rating) == "Rating(model='a', rating=1000.0, low=1000.0, high=1000.0, wins=0.0, comparisons=0)"
    for record, field in ((rows[0], "position"), (parsed, "status"), (rating, "rating")):
        with pytest.raises(AttributeError):
            setattr(record, field, 3)
    assert (rows[0] == 1, rows[0] != "x") == (False, True)  # another type is never equal
    with pytest.raises(TypeError):
        rows[0] < rows[1]  # noqa: B015 - ordering is not defined, as for a dataclass


def test_one_aggregate_entry_by_label_or_by_name_with_options():
    ballots, label_to_model = {"x": ["A", "B"], "y": ["B", "A"]}, {"A": "x", "B": "y"}
    by_label = _ranking.aggregate(ballots, label_to_model=label_to_model, exclude_self=True, weights={"x": 2.0})
    by_name = _ranking.aggregate(
        {"x": ["x", "y"], "y": ["y", "x"]}, candidates=["x", "y"], exclude_self=True, weights={"x": 2.0}
    )
    assert by_label == by_name == ranking.aggregate(ballots, label_to_model, exclude_self=True, weights={"x": 2.0})
    assert _ranking.aggregate([["y", "x"], ["x"]], candidates=["x", "y"]) == ranking.aggregate_models(
        [["y", "x"], ["x"]], ["x", "y"]
    )
    with pytest.raises(ValueError, match="either label_to_model or candidates"):
        _ranking.aggregate(ballots)
    with pytest.raises(ValueError, match="either label_to_model or candidates"):
        _ranking.aggregate(ballots, label_to_model=label_to_model, candidates=["x", "y"])
    with pytest.raises(ValueError, match="need ballots by reviewer"):
        _ranking.aggregate([["x", "y"]], candidates=["x", "y"], exclude_self=True)
    with pytest.raises(ValueError, match="ballot 0 names unknown candidate"):
        _ranking.aggregate([["q"]], candidates=["x", "y"])


def test_parse_many_equals_per_call():
    texts = ["FINAL RANKING:\n1. Response B\n2. Response A", "nothing", "FINAL RANKING: A", ""] * 50
    labels = ["A", "B"]
    many = _ranking.parse_many(texts, labels)
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


def test_frozen_results_stay_frozen():
    score = ranking.aggregate({}, {"A": "m"})[0]
    with pytest.raises(AttributeError):
        score.position = 3  # type: ignore[misc]
    assert hash(ranking.parse_ranking("x", ["A"]).status)
