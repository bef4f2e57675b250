"""Rubric scores (issue 33): realistic reviewer texts read by the Rust parser, the summary's means
and consensus, and both against the pure-Python reference (tests/ranking_reference.py)."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.ranking import parse_scores, score_summary
from tests import ranking_reference as ref

CRITERIA = ["accuracy", "insight", "completeness"]
LABELS = ["A", "B", "C"]
CASES: list[tuple[str, str, dict[str, dict[str, float]]]] = [
    (
        "the asked format",
        "Response A: Accuracy=8, Insight=7, Completeness=9\nResponse B: Accuracy=5, Insight=6, Completeness=4",
        {"A": {"accuracy": 8, "insight": 7, "completeness": 9}, "B": {"accuracy": 5, "insight": 6, "completeness": 4}},
    ),
    (
        "markdown headings and bullets",
        "### Response A\n- **Accuracy:** 8/10\n- **Insight:** 7/10\n\n### Response B\n- Accuracy: 4/10",
        {"A": {"accuracy": 8, "insight": 7}, "B": {"accuracy": 4}},
    ),
    (
        "bare letters",
        "A: accuracy 9; insight 8\nB) Accuracy - 3",
        {"A": {"accuracy": 9, "insight": 8}, "B": {"accuracy": 3}},
    ),
    ("out of", "Response C — completeness score: 6 out of 10", {"C": {"completeness": 6}}),
    ("decimals and full-width", "Ｒｅｓｐｏｎｓｅ Ａ： Ａｃｃｕｒａｃｙ＝７.５", {"A": {"accuracy": 7.5}}),
    (
        "a table",
        "| Response | Accuracy | Insight | Completeness |\n|---|---|---|---|\n"
        "| A | 8 | 7 | 9 |\n| Response B | 6 | 5 | 4 |",
        {"A": {"accuracy": 8, "insight": 7, "completeness": 9}, "B": {"accuracy": 6, "insight": 5, "completeness": 4}},
    ),
    ("a placeholder is no score", "Response A: Accuracy=X, Insight=N", {}),
    ("outside the scale", "Response A: Accuracy=0, Insight=11, Completeness=10", {"A": {"completeness": 10}}),
    ("another denominator", "Response A: Accuracy 4/5", {}),
    ("unknown label", "Response Z: accuracy 9\naccuracy 8", {}),
    ("prose mentioning a criterion", "Response A. Accuracy matters more than 9 other things.", {}),
    ("last value wins", "Response B: accuracy 3\nCorrection: Response B: accuracy 5", {"B": {"accuracy": 5}}),
    ("no response named", "Accuracy=8, Insight=7", {}),
]


@pytest.mark.parametrize(("name", "text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_realistic_reviews(name, text, expected):
    assert parse_scores(text, LABELS, CRITERIA, 1, 10) == expected
    assert ref.parse_scores(text, LABELS, CRITERIA, 1, 10) == expected


def test_a_ballot_and_scores_in_one_review():
    text = (
        "Response A is precise; B misses the point.\n\nResponse A: Accuracy=9, Insight=8, Completeness=8\n"
        "Response B: Accuracy=4, Insight=3, Completeness=5\n\nFINAL RANKING:\n1. Response A\n2. Response B"
    )
    scores = parse_scores(text, ["A", "B"], CRITERIA, 1, 10)
    assert scores == {
        "A": {"accuracy": 9, "insight": 8, "completeness": 8},
        "B": {"accuracy": 4, "insight": 3, "completeness": 5},
    }


def test_custom_rubric_and_scale():
    text = "Response A: Clarity=4, Factual Accuracy: 5\nResponse B: clarity 6"
    assert parse_scores(text, ["A", "B"], ["clarity", "factual accuracy"], 1, 5) == {
        "A": {"clarity": 4, "factual accuracy": 5}
    }


def test_summary_means_and_consensus():
    same = [{"m1": {"accuracy": 8.0}}, {"m1": {"accuracy": 8.0}, "m2": {"accuracy": 3.0}}]
    summary = score_summary(same, ["accuracy"], 1, 10)
    assert summary.means == {"m1": {"accuracy": 8.0}, "m2": {"accuracy": 3.0}}
    assert summary.consensus == 100.0
    split = score_summary([{"m": {"accuracy": 1.0}}, {"m": {"accuracy": 10.0}}], ["accuracy"], 1, 10)
    assert split.consensus == 0.0 and split.means == {"m": {"accuracy": 5.5}}
    assert score_summary([{"m": {"accuracy": 4.0}}], ["accuracy"], 1, 10).consensus is None
    assert score_summary([], ["accuracy"], 1, 10).consensus is None


@pytest.mark.parametrize(
    ("sheets", "criteria"),
    [
        ([{"m": {"accuracy": 11.0}}], ["accuracy"]),
        ([{"m": {"clarity": 5.0}}], ["accuracy"]),
        ([], ["a", "A"]),
        ([], []),
    ],
)
def test_summary_refuses_bad_input(sheets, criteria):
    with pytest.raises(ValueError):
        score_summary(sheets, criteria, 1, 10)


FRAGMENTS = [
    "Response A",
    "Response B",
    "Response Z",
    "A: ",
    "B) ",
    "C. ",
    "Accuracy",
    "accuracy",
    "Insight",
    "completeness",
    " score",
    "=",
    ": ",
    " - ",
    "(",
    ")",
    "**",
    "8",
    "10",
    "7.5",
    "0",
    "12",
    "/10",
    "/5",
    " out of 10",
    ", ",
    "; ",
    "\n",
    "\n| A | 8 |",
    "| Response | Accuracy | Insight |\n",
    "|---|---|\n",
    "| B | 9 | 11/10 |\n",
    "1. ",
    "- ",
    "### ",
    "X",
    "1234567",
    "inaccuracy ",
    "\u200b",
    "Ａ",
]


def test_matches_reference_on_random_fragment_texts():
    rng = random.Random(33)
    for _ in range(5000):
        text = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 16)))
        assert parse_scores(text, LABELS, CRITERIA, 1, 10) == ref.parse_scores(text, LABELS, CRITERIA, 1, 10), repr(
            text
        )


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=24).map("".join) | st.text(max_size=80))
def test_hypothesis_matches_reference(text):
    assert parse_scores(text, LABELS, CRITERIA, 1, 10) == ref.parse_scores(text, LABELS, CRITERIA, 1, 10)


score = st.sampled_from([1.0, 2.5, 5.0, 7.0, 9.0, 10.0])
sheet = st.dictionaries(
    st.sampled_from(["m1", "m2", "m3"]), st.dictionaries(st.sampled_from(CRITERIA), score), max_size=3
)


@settings(max_examples=300, deadline=None)
@given(st.lists(sheet, max_size=5))
def test_summary_matches_reference(sheets):
    summary = score_summary(sheets, CRITERIA, 1, 10)
    means, consensus = ref.rubric_summary(sheets, CRITERIA, 1, 10)
    assert summary.means.keys() == means.keys()
    for model, values in means.items():
        assert summary.means[model] == pytest.approx(values)
    assert (summary.consensus is None) == (consensus is None)
    if consensus is not None:
        assert summary.consensus is not None and math.isclose(summary.consensus, consensus, abs_tol=1e-9)
        assert 0 <= summary.consensus <= 100
