"""parse_verdict (auto mode's AGREE / DISAGREE judgement): realistic judge outputs, and the Rust
parser against the pure-Python reference (tests/ranking_reference.py)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import _ranking
from core.ranking import parse_verdict
from tests import ranking_reference as ref

CASES: list[tuple[str, str, str]] = [
    ("the asked format", "Both answers give 42.\n\nVERDICT: AGREE", "agree"),
    ("disagree", "A says 1914, B says 1918.\nVERDICT: DISAGREE\n", "disagree"),
    ("bold header", "**Verdict:** Agree", "agree"),
    ("heading then word", "## Verdict\n\n**DISAGREE**", "disagree"),
    ("inline in prose", "My verdict: disagreed, B misreads the question.", "disagree"),
    ("full-width", "ＶＥＲＤＩＣＴ：ＤＩＳＡＧＲＥＥ", "disagree"),
    ("CRLF and indentation", "VERDICT:\r\n   AGREE\r\n", "agree"),
    ("last header wins", "VERDICT: AGREE\nWait, B says 41.\nVERDICT: DISAGREE", "disagree"),
    ("last header unreadable", "VERDICT: AGREE\nVERDICT: unsure", "none"),
    ("negation is not a verdict", "VERDICT: they do not agree", "none"),
    ("glued word", "VERDICT: AGREEMENT", "none"),
    ("invisible character in the header", "VER\u200bDICT: AGREE", "none"),
    ("bare word", "DISAGREE", "disagree"),
    ("bare word last, decorated", "Same number in both.\n\n**Agree.**", "agree"),
    ("first word without a header", "Agree: both say Paris.\nNo more to add.", "agree"),
    ("last exact word beats the first", "Disagree at first sight...\n\nAGREE", "agree"),
    ("prose only", "I agree with both of them.", "none"),
    ("empty", "", "none"),
    ("marks only", " ** \n _ ", "none"),
    ("byte-order mark", "\ufeffVERDICT: AGREE", "agree"),
    ("agrees with an s", "verdict: Agrees", "agree"),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_judge_outputs(text, expected):
    assert parse_verdict(text) == expected
    assert ref.parse_verdict(text) == expected


FRAGMENTS = [
    "VERDICT",
    "verdict",
    "**Verdict:**",
    "## Verdict",
    ":",
    "：",
    "AGREE",
    "agreed",
    "Disagrees",
    "DISAGREE.",
    "not",
    "\n",
    "\r\n",
    "\r",
    "\u2028",
    " ",
    "\t",
    "*",
    "`",
    "(",
    ")",
    "-",
    "#",
    "!",
    ".",
    "\u200b",
    "\ufeff",
    "Ａ",
    "s",
    "d",
    "1",
    "both say 42",
]


def test_matches_reference_on_random_fragment_texts():
    rng = random.Random(23)
    for _ in range(5000):
        text = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 14)))
        assert parse_verdict(text) == ref.parse_verdict(text), repr(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=20).map("".join) | st.text(max_size=60))
def test_hypothesis_matches_reference(text):
    verdict = parse_verdict(text)
    assert verdict == ref.parse_verdict(text)
    assert verdict in ("agree", "disagree", "none")


@pytest.mark.parametrize("bad", [None, b"VERDICT: AGREE", 1, ["AGREE"]])
def test_wrong_types_raise_type_error(bad):
    with pytest.raises(TypeError):
        parse_verdict(bad)
    with pytest.raises(TypeError):
        _ranking.parse_verdict(bad)


def test_the_binding_returns_the_status_names():
    assert _ranking.parse_verdict("VERDICT: AGREE") == "agree"
    assert _ranking.parse_verdict("VERDICT: DISAGREE") == "disagree"
    assert _ranking.parse_verdict("?") == "none"
