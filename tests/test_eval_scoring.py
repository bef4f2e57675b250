"""`council eval`'s pure parts: the bundled set, dataset files, the scorers' rules, the majority vote
and the statistics (against tables computed by hand)."""

from __future__ import annotations

import json
import math
from collections import Counter
from datetime import date, timedelta

import pytest

from core.errors import ConfigurationError
from core.eval import configs, dataset, scoring, stats
from core.eval.dataset import EvalItem
from core.eval.report import build
from core.models.eval import EvalSample

# --------------------------------------------------------------------------- the bundled set


def test_the_bundled_set_is_the_same_for_the_same_seed_and_differs_for_another():
    first, again, other = dataset.bundled(7), dataset.bundled(7), dataset.bundled(8)
    assert first.items == again.items
    assert first.fingerprint() == again.fingerprint()
    assert first.fingerprint() != other.fingerprint()
    assert [i.input for i in first.items] != [i.input for i in other.items]


def test_the_bundled_set_has_at_least_200_items_over_at_least_4_kinds_taken_in_turn():
    items = dataset.bundled().items
    assert len(items) >= 200
    kinds = Counter(item.kind for item in items)
    assert len(kinds) >= 4 and min(kinds.values()) >= 40
    assert len({item.kind for item in items[:5]}) == 5  # --limit 5 already mixes every kind
    assert len({item.id for item in items}) == len(items)
    assert len({item.input for item in items}) > 0.9 * len(items)


def test_bundled_answers_are_exact():
    """Recompute the answers of the kinds whose questions say everything needed."""
    checked = 0
    for item in dataset.bundled().items:
        text = item.input
        if text.startswith("What date is"):
            days = int(text.split()[3])
            start = date.fromisoformat(text.split("after ")[1][:10])
            assert item.target == (start + timedelta(days=days)).isoformat()
            checked += 1
        elif text.startswith("Write the word"):
            word = text.split("'")[1]
            assert item.target == word[::-1]
            checked += 1
        elif text.startswith("What is the sum of"):
            numbers = [int(n) for n in text.removeprefix("What is the sum of ").rstrip("?").split(", ")]
            assert item.target == str(sum(numbers))
            checked += 1
        elif text.startswith("Convert "):
            amount = float(text.split()[1])
            assert float(item.target) > 0 and amount > 0
    assert checked >= 20


def test_a_jsonl_and_a_csv_dataset_are_read(tmp_path):
    jsonl = tmp_path / "set.jsonl"
    jsonl.write_text(
        "\n".join(
            [
                json.dumps({"input": "2+2?", "target": 4}),
                json.dumps({"id": "q2", "input": "Capital of France?", "target": "Paris", "choices": []}),
                "",
            ]
        )
    )
    data = dataset.from_file(jsonl)
    assert [(i.id, i.target) for i in data.items] == [("1", "4"), ("q2", "Paris")]
    table = tmp_path / "set.csv"
    table.write_text('input,target,choices\nPick the even one,B,"[""3"", ""4""]"\nPick red,A,red|blue\n')
    data = dataset.from_file(table)
    assert data.items[0].choices == ("3", "4") and data.items[1].choices == ("red", "blue")
    assert scoring.default_scorer(data.items) == "choice"


@pytest.mark.parametrize(
    ("content", "suffix", "message"),
    [
        ('{"input": "x"}\n', ".jsonl", "item 1 has no target"),
        ("not json\n", ".jsonl", "line 1 is not JSON"),
        ("question,answer\nx,y\n", ".csv", "must name input and target"),
        ("", ".jsonl", "no items"),
    ],
)
def test_a_bad_dataset_is_one_line_naming_the_problem(tmp_path, content, suffix, message):
    path = tmp_path / f"bad{suffix}"
    path.write_text(content)
    with pytest.raises(ConfigurationError, match=message) as error:
        dataset.from_file(path)
    assert "\n" not in error.value.user_message


def test_a_missing_dataset_file_is_one_line(tmp_path):
    with pytest.raises(ConfigurationError, match="cannot be read"):
        dataset.from_file(tmp_path / "nope.jsonl")


# --------------------------------------------------------------------------- scorers


def test_the_default_scorer_follows_the_targets():
    numbers = [EvalItem("1", "q", "42"), EvalItem("2", "q", "-3.5")]
    words = [EvalItem("1", "q", "42"), EvalItem("2", "q", "Paris")]
    choices = [EvalItem("1", "q", "A", ("x", "y"))]
    assert scoring.default_scorer(numbers) == "numeric"
    assert scoring.default_scorer(words) == "exact"
    assert scoring.default_scorer(choices) == "choice"
    assert scoring.default_scorer(dataset.bundled().items) == "exact"


def test_the_final_answer_is_the_last_answer_line_else_the_last_line():
    assert scoring.final_answer("Hmm.\nANSWER: 12\nwait\n**Answer:** 13") == "13"
    assert scoring.final_answer("Final answer: Paris.") == "Paris."
    assert scoring.final_answer("Thinking...\n\nParis\n") == "Paris"
    assert scoring.final_answer("") == ""


def test_exact_match_is_normalised():
    assert scoring.exact_correct("Reasoning\nANSWER: **Tuesday**.", "Tuesday")
    assert scoring.exact_correct("ANSWER: 3,  9,17", "3, 9, 17")
    assert not scoring.exact_correct("ANSWER: 3,9,17", "3917")  # a list is not a number
    assert scoring.exact_correct("ANSWER: 1,000.50", "1000.5")  # numbers in canonical form
    assert not scoring.exact_correct("ANSWER: Wednesday", "Tuesday")
    assert not scoring.exact_correct("Tuesday or Wednesday", "Tuesday")


def test_numeric_match_has_a_relative_tolerance_of_1e_6():
    assert scoring.numeric_correct("ANSWER: $1,234", "1234")
    assert scoring.numeric_correct("so about 1000000.5 in all", "1000000")  # within 1e-6 relative
    assert not scoring.numeric_correct("ANSWER: 1000002", "1000000")
    assert scoring.numeric_correct("The change is 25 dollars.\nANSWER: 25", "25")
    assert not scoring.numeric_correct("no number here", "25")
    assert scoring.numeric_correct("ANSWER: -0.0", "0")


def test_choice_match_reads_the_letter_or_the_choice_text():
    item = EvalItem("1", "Which is even?", "B", ("3", "4", "5"))
    assert scoring.choice_correct("It is the second.\nANSWER: (B)", item)
    assert scoring.choice_correct("ANSWER: 4", item)  # the choice's text
    assert not scoring.choice_correct("ANSWER: A", item)
    assert not scoring.choice_correct("ANSWER: D", item)  # not a choice
    assert scoring.choice_correct("ANSWER: B", EvalItem("1", "q", "4", ("3", "4")))  # target as text


def test_the_majority_vote_ties_go_to_the_earliest_sample():
    item = EvalItem("1", "q", "7")
    samples = ["ANSWER: 5", "ANSWER: 7", "ANSWER: 7.0", "ANSWER: 5", "nothing"]
    assert scoring.majority(samples, "numeric", item) == 0  # 5 and 7 have two votes each: 5 came first
    assert scoring.majority(["ANSWER: 7", *samples], "numeric", item) == 0
    assert scoring.majority(["nothing", "ANSWER: 9", "ANSWER: 9"], "exact", item) == 1
    assert scoring.majority(["nothing", "nothing"], "exact", item) == 0


# --------------------------------------------------------------------------- statistics


def test_mcnemar_exact_against_a_hand_computed_table():
    # 2x2 table of a configuration against the best member over 20 items:
    #               member right  member wrong
    # config right       9             6        -> b = 6
    # config wrong       1             4        -> c = 1
    # p = 2 * P(X <= 1), X ~ Bin(7, 1/2) = 2 * (1 + 7) / 128 = 0.125
    config = [True] * 9 + [True] * 6 + [False] * 1 + [False] * 4
    member = [True] * 9 + [False] * 6 + [True] * 1 + [False] * 4
    assert stats.discordant(config, member) == (6, 1)
    assert stats.mcnemar_exact(6, 1) == pytest.approx(0.125)
    assert stats.mcnemar_exact(0, 0) == 1.0
    assert stats.mcnemar_exact(3, 3) == 1.0  # 2 * P(X <= 3 | n=6) = 2 * 42/64 > 1 -> 1
    assert stats.mcnemar_exact(10, 0) == pytest.approx(2 / 1024)


def test_wilson_interval_against_known_values():
    low, high = stats.wilson(7, 10)
    assert (round(low, 4), round(high, 4)) == (0.3968, 0.8922)
    assert stats.wilson(0, 10)[0] == 0.0
    assert stats.wilson(10, 10)[1] == pytest.approx(1.0)
    assert stats.wilson(0, 0) == (0.0, 1.0)


def test_percentiles_interpolate():
    values = [1.0, 2.0, 3.0, 4.0, 10.0]
    assert stats.percentile(values, 50) == 3.0
    assert stats.percentile(values, 95) == pytest.approx(8.8)
    assert stats.percentile([], 50) is None


def test_the_report_pairs_every_configuration_with_the_best_member():
    def samples(config: str, right: list[bool], calls: int) -> list[EvalSample]:
        return [
            EvalSample(config=config, item_id=str(i), position=i, answer="", correct=r, calls=calls, latency_s=1.0 + i)
            for i, r in enumerate(right)
        ]

    a = [True] * 9 + [False] * 6 + [True] * 1 + [False] * 4  # member a: 10/20
    b = [True] * 5 + [False] * 15  # member b: 5/20
    council = [True] * 9 + [True] * 6 + [False] * 1 + [False] * 4  # 15/20
    report = build(
        "run1",
        "hand",
        ["member:a", "member:b", "standard"],
        [*samples("member:a", a, 1), *samples("member:b", b, 1), *samples("standard", council, 7)],
        20,
    )
    rows = {row.name: row for row in report.configs}
    assert rows["member:a"].p_value is None  # the best member is the reference
    assert rows["standard"].p_value == pytest.approx(0.125)
    assert (rows["standard"].wins, rows["standard"].losses) == (6, 1)
    assert rows["standard"].accuracy == 0.75 and rows["standard"].mean_calls == 7
    assert rows["member:b"].versus == "member:a"
    assert report.complete
    document = json.loads(report.model_dump_json())
    assert list(document) == ["run", "dataset", "configs", "effective_votes", "error_correlation", "consensus"]
    # a and b: both right on 5 items, only a on 5, neither on 10: phi = (5·10 − 5·0) / √(10·10·5·15)
    phi = 50 / math.sqrt(7500)
    assert document["error_correlation"]["phi"][0][1] == pytest.approx(phi)
    assert document["effective_votes"]["n_eff"] == pytest.approx(2 / (1 + phi))


def test_configuration_names():
    assert configs.parse("member:openai/gpt-5.1").model == "openai/gpt-5.1"
    assert configs.parse("self-consistency:local:smollm2").model == "local:smollm2"
    assert configs.parse("self-consistency").model is None
    with pytest.raises(ConfigurationError, match="unknown configuration 'best'"):
        configs.parse("best")
    order = [s.name for s in configs.chosen("self-consistency,standard,chairman,member:a", ["a", "b"])]
    assert order == ["member:a", "chairman", "standard", "self-consistency"]
    defaults = configs.default_names(["a|a-mini", "b"])
    assert defaults[:2] == ["standard", "quick"] and "member:a" in defaults and "member:b" in defaults


def test_auto_is_skipped_by_default_and_refused_by_name_until_the_engine_has_it():
    if configs.mode_available("auto"):
        assert "auto" in configs.default_names(["a"])
        assert configs.chosen("auto", ["a"])[0].mode == "auto"
        return
    assert "auto" not in configs.default_names(["a"])
    with pytest.raises(ConfigurationError, match="council/auto: this version of the council has no 'auto' mode"):
        configs.chosen("standard,auto", ["a"])
