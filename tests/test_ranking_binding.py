"""The native module core._ranking directly: tuple results, batch entry points, threads."""

from __future__ import annotations

import random
import subprocess
import sys

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


# Classes the binding does not expect as `cls`. It must answer each with a Python exception or an
# instance built the way `cls.__new__(cls)` plus `object.__setattr__` would build it, never crash
# the interpreter (before the fix `type` aborted it and `BaseException` segfaulted it).
HOSTILE_CLASSES = """
import abc

class Meta(type):
    pass

class NewReturnsAType:
    def __new__(cls):
        return int

class NewReturnsAnInt:
    def __new__(cls):
        return 7

class NewNeedsArguments:
    def __new__(cls, a, b):
        return super().__new__(cls)

class Abstract(abc.ABC):
    @abc.abstractmethod
    def f(self): ...

class Slotted:
    __slots__ = ("x",)

class ErrorSubclass(ValueError):
    pass

HOSTILE = [type, Meta, BaseException, ErrorSubclass, KeyboardInterrupt, int, bool, str, bytes, tuple, dict, list,
           object, NewReturnsAType, NewReturnsAnInt, NewNeedsArguments, Abstract, Slotted, type(None),
           type(len), type(abc), memoryview, staticmethod, property]
"""

BINDING_CALLS = """
from core import _ranking
CALLS = {
    "parse_ranking": lambda cls: _ranking.parse_ranking("FINAL RANKING: B > A", ["A", "B"], cls),
    "parse_many": lambda cls: _ranking.parse_many(["FINAL RANKING: B > A", "x"], ["A", "B"], cls),
    "aggregate": lambda cls: _ranking.aggregate({"x": ["A", "B"]}, {"A": "x", "B": "y"}, False, cls),
    "aggregate_batch": lambda cls: _ranking.aggregate_batch([({"x": ["A"]}, {"A": "x", "B": "y"})], False, cls),
    "aggregate_models": lambda cls: _ranking.aggregate_models([["x", "y"]], ["x", "y"], cls),
    "leaderboard": lambda cls: _ranking.leaderboard([["x", "y"]], 3, 0, 0.9, 1, cls),
}
for name, call in CALLS.items():
    for cls in HOSTILE:
        print(name, cls.__qualname__, end=" ", flush=True)
        try:
            result = call(cls)
        except Exception as exc:
            print("raised", type(exc).__name__, flush=True)
        else:
            print("returned", type(result).__name__, flush=True)
        import gc; gc.collect()
print("survived")
"""


def test_unexpected_classes_raise_instead_of_crashing():
    done = subprocess.run(
        [sys.executable, "-c", HOSTILE_CLASSES + BINDING_CALLS], capture_output=True, text=True, timeout=60
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 0, f"rc {done.returncode} after: {lines[-1] if lines else ''}\n{done.stderr[-2000:]}"
    assert lines[-1] == "survived"
    outcomes = {" ".join(line.split()[:2]): line.split()[2] for line in lines[:-1]}
    for call in ("parse_ranking", "parse_many", "aggregate", "aggregate_batch", "aggregate_models", "leaderboard"):
        for cls in ("type", "Meta", "int", "object", "NewReturnsAType", "Abstract", "NewNeedsArguments"):
            assert outcomes[f"{call} {cls}"] == "raised", (call, cls)
    assert outcomes["parse_ranking BaseException"] == "returned"  # BaseException.__new__ + object.__setattr__ work
