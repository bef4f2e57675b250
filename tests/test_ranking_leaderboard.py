"""leaderboard: Bradley-Terry with bootstrap intervals, Rust against the Python reference."""

from __future__ import annotations

import math
import random

import pytest

from core.ranking import Rating, leaderboard
from tests import ranking_reference as ref

MODELS = ["m-a", "m-b", "m-c", "m-d", "m-e"]  # true strength order


def noisy_ballots(rng: random.Random, n: int, k: int = 3) -> list[list[str]]:
    return [sorted(MODELS, key=lambda m: MODELS.index(m) + rng.gauss(0, 1.2))[:k] for _ in range(n)]


def assert_close(got: list[Rating], want: list[Rating], tol: float = 1e-6) -> None:
    assert [r.model for r in got] == [r.model for r in want]
    for g, w in zip(got, want):
        assert g.comparisons == w.comparisons and g.wins == w.wins
        for field in ("rating", "low", "high"):
            assert getattr(g, field) == pytest.approx(getattr(w, field), abs=tol), (g, w, field)


def test_matches_reference_exactly_seeded():
    rng = random.Random(11)
    ballots = noisy_ballots(rng, 400)
    for seed in (0, 1, 2**64 - 1):
        assert_close(leaderboard(ballots, rounds=50, seed=seed), ref.leaderboard(ballots, rounds=50, seed=seed))


def test_matches_reference_on_random_small_histories():
    rng = random.Random(12)
    for _ in range(60):
        models = [f"x{i}" for i in range(rng.randint(1, 6))]
        ballots = [rng.sample(models, rng.randint(0, len(models))) for _ in range(rng.randint(0, 30))]
        rounds = rng.randint(0, 20)
        conf = rng.choice([0.5, 0.9, 0.95])
        seed = rng.getrandbits(64)
        assert_close(
            leaderboard(ballots, rounds=rounds, seed=seed, confidence=conf),
            ref.leaderboard(ballots, rounds=rounds, seed=seed, confidence=conf),
        )


def test_recovers_true_order_with_intervals():
    ballots = noisy_ballots(random.Random(3), 3000)
    board = leaderboard(ballots, rounds=300)
    assert [r.model for r in board] == MODELS
    assert sum(r.rating for r in board) / len(board) == pytest.approx(1000.0)
    for r in board:
        assert r.low <= r.rating <= r.high
        assert r.high - r.low < 80
    # each ballot of 3 gives 3 comparisons
    assert sum(r.comparisons for r in board) == 2 * 3 * 3000
    assert sum(r.wins for r in board) == 3 * 3000


def test_deterministic_and_seed_dependent():
    ballots = noisy_ballots(random.Random(4), 500)
    a = leaderboard(ballots, rounds=100, seed=9)
    assert a == leaderboard(ballots, rounds=100, seed=9)
    b = leaderboard(ballots, rounds=100, seed=10)
    assert [r.rating for r in a] == [r.rating for r in b]
    assert [r.low for r in a] != [r.low for r in b]


def test_point_estimate_is_order_invariant():
    ballots = noisy_ballots(random.Random(5), 300)
    a = leaderboard(ballots, rounds=0)
    b = leaderboard(list(reversed(ballots)), rounds=0)
    assert_close(a, b, tol=1e-9)


def test_unbeaten_and_winless_models_stay_finite():
    board = leaderboard([["a", "b"]] * 20, rounds=20)
    assert all(math.isfinite(x) for r in board for x in (r.rating, r.low, r.high))
    assert board[0].model == "a" and board[0].rating > board[1].rating


def test_degenerate_inputs():
    assert leaderboard([]) == []
    assert leaderboard([["solo"]]) == [Rating("solo", 1000.0, 1000.0, 1000.0, 0.0, 0)]
    board = leaderboard([["a", "b"]], rounds=0)
    assert [(r.low, r.high) for r in board] == [(r.rating, r.rating) for r in board]


@pytest.mark.parametrize(
    "kwargs",
    [dict(confidence=1.0), dict(confidence=0.0), dict(rounds=-1), dict(seed=-1), dict(seed=2**64), dict(rounds=10**7)],
)
def test_invalid_values_raise_value_error(kwargs):
    with pytest.raises(ValueError):
        leaderboard([["a", "b"]], **kwargs)


def test_repeated_model_in_a_ballot_is_rejected():
    with pytest.raises(ValueError, match="twice"):
        leaderboard([["a", "b", "a"]])


@pytest.mark.parametrize(
    "kwargs,ballots",
    [
        (dict(rounds=1.5), [["a", "b"]]),
        (dict(seed="0"), [["a", "b"]]),
        (dict(), ["ab"]),
        (dict(), [[1, 2]]),
        (dict(confidence="x"), [["a"]]),
    ],
)
def test_wrong_types_raise_type_error(kwargs, ballots):
    with pytest.raises(TypeError):
        leaderboard(ballots, **kwargs)
