"""Internal markers never reach a user-visible text: core/shared/markers.py, whole texts and streams."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.shared.fences import Fence
from core.shared.markers import MAX_HELD, MarkerFilter, has_markers, strip_markers

NONCE = "626abc6bbe532717"
FENCE = Fence(NONCE)
# The demo's chairman synthesis that started issue 10.
DEMO_ECHO = f"<<<RESPONSE {NONCE}>>\nThe answer to this question is:"

ECHOES = {
    DEMO_ECHO: "The answer to this question is:",
    f"<<<RESPONSE 4 {NONCE}>>\nThe answer is C.": "The answer is C.",
    f"Intro\n<<<END RESPONSE A {NONCE}>>>\nNext": "Intro\nNext",
    f"< < <END RESPONSE A {NONCE}> > >\nok": "ok",  # as fences.neutralise spaces a quoted marker out
    f"QUESTION {NONCE} what": "what",
    "<<<question>>> hi": "hi",
    "x<<<REVIEW 2>>>y": "xy",
    "Done. END RESPONSE B": "Done. ",
    "RESPONSES are RESPONSE A>>> here": "RESPONSES are here",
    f"a {NONCE} b": "a b",  # the running council's nonce alone
    # Near copies (issue 27: a review read "The question: 3d07824f9b5c16ebe"): one digit added
    # inside or after, one dropped, or the nonce split by a space. (One added before: see below.)
    f"The question: 3{NONCE} x": "The question: 3x",
    f"The question: {NONCE[:9]}e{NONCE[9:]} x": "The question: x",
    f"The question: {NONCE}e x": "The question: x",
    f"The question: {NONCE[:4]}{NONCE[5:]} x": "The question: x",
    f"The question: {NONCE[1:]} x": "The question: x",
    f"The question: {NONCE[:-1]}.": "The question: .",
    f"The question: {NONCE[:8]} {NONCE[8:]} x": "The question: x",
    f"<<<RESPONSE A {NONCE[:8]} {NONCE[8:]}>>>\nok": "ok",  # a fence's form ending inside a split copy
    FENCE.wrap("RESPONSE A", "Paris."): "Paris.\n",
    FENCE.wrap("QUESTION", "Why?") + "\nBecause.": "Why?\nBecause.",
}

PLAIN = [
    "Python's prompt: >>> print(1)",
    "x <<< y and a >>> b",
    "the response to the REVIEW of the question",
    "THE END. RESPONSE times vary.",
    "WEEKEND RESPONSE A",
    "In the END, QUESTION everything.",
    "RESPONSES, REVIEWS, QUESTIONS",
    "commit 626abc6bbe53 fixed it",  # a hex word is no nonce of ours
    "ids 626abc6b and be532717 differ",  # halves of a nonce are no copy of it
]


@pytest.mark.parametrize(("text", "expected"), list(ECHOES.items()))
def test_echoed_markers_are_removed(text, expected):
    assert strip_markers(text, [NONCE]) == expected
    assert has_markers(text, [NONCE])


@pytest.mark.parametrize("text", PLAIN)
def test_ordinary_text_is_kept(text):
    assert strip_markers(text, [NONCE]) == text
    assert not has_markers(text, [NONCE])


def _streamed(text: str, cuts: list[int]) -> tuple[str, list[str]]:
    markers = MarkerFilter([NONCE])
    pieces, last = [], 0
    for cut in [*cuts, len(text)]:
        pieces.append(markers.feed(text[last:cut]))
        last = cut
    pieces.append(markers.flush())
    return "".join(pieces), pieces


@pytest.mark.parametrize("text", [*ECHOES, *PLAIN])
def test_a_stream_cut_anywhere_shows_what_the_whole_text_shows(text):
    expected = strip_markers(text, [NONCE])
    for first in range(len(text) + 1):
        for second in range(first, len(text) + 1):
            shown, _ = _streamed(text, [first, second])
            assert shown == expected, (first, second)


def test_a_marker_is_held_back_until_it_is_resolved_and_never_shown():
    markers = MarkerFilter([NONCE])
    shown = [markers.feed(piece) for piece in ["Hello ", "<", "<<", "RESP", "ONSE", " A", " 626abc6b", "be532717"]]
    assert shown == ["Hello ", "", "", "", "", "", "", ""]
    assert [markers.feed(piece) for piece in [">>>", "\n", "World"]] == ["", "", "World"]
    assert markers.flush() == "" and markers.markers == 1 and markers.text == "Hello World"


def test_a_held_tail_that_is_no_marker_is_released():
    markers = MarkerFilter()
    assert markers.feed("Read the RESP") == "Read the "
    assert markers.feed("ONSE") == ""
    assert markers.feed("s carefully") == "RESPONSEs carefully"
    assert markers.feed(" <") == " "
    assert markers.flush() == "<" and markers.markers == 0


def test_a_long_bracket_run_does_not_stall_or_blow_up():
    text = "<" * 5000 + " end"
    assert strip_markers(text) == text
    # A marker's bracket runs end after 8 brackets: the rest of a longer run is ordinary text.
    assert strip_markers("RESPONSE A" + ">" * 5000) == ">" * 4992
    assert strip_markers("<" * 5000 + "RESPONSE A>>>") == "<" * 4992
    assert not has_markers(strip_markers("<" * 5000 + "REVIEW>>>" + "x<QUESTION 1>"))


@pytest.mark.parametrize(
    "parts",
    [
        ["END", f" {NONCE}", "RESPONSE"],  # the nonce goes, "END RESPONSE" is left
        ["END ", NONCE[:7], NONCE[7:], "RESPONSE A"],
        ["<", f"{NONCE}", "REVIEW"],  # "<REVIEW"
        ["RESPONSE ", f"{NONCE} ", "A>>>"],
        ["Done. ", "END", f" {NONCE}", f" {NONCE}", "QUESTION", " and more"],
    ],
)
def test_removing_a_marker_never_joins_shown_text_into_another(parts):
    """The text shown before a marker is removed cannot end in the start of a marker."""
    text = "".join(parts)
    shown, _ = _streamed(text, list(itertools.accumulate(len(part) for part in parts[:-1])))
    assert shown == strip_markers(text, [NONCE])
    assert not has_markers(shown, [NONCE]) and not _LEAK.search(shown)


def test_a_long_run_of_marker_beginnings_is_shown_without_waiting_for_its_end():
    """A run like "END END END ..." could become a marker with every next piece: it is held only so far."""
    markers = MarkerFilter([NONCE])
    shown = "".join(markers.feed("END ") for _ in range(200))
    assert len(shown) >= 800 - MAX_HELD and set(shown) <= set("END ")
    shown += markers.feed(f"{NONCE}RESPONSE A>>> and then")  # what it completes goes, with the nonce
    shown += markers.flush()
    assert not has_markers(shown, [NONCE]) and not _LEAK.search(shown), shown
    assert shown.endswith("END and then")


def test_a_marker_completing_a_shown_beginning_loses_its_unshown_part():
    # The run is shown from its start; once the nonces between go, a shown "END " meets "RESPONSE".
    text = "END " * 60 + f" {NONCE}" * 12 + "RESPONSE x"
    shown, pieces = _streamed(text, list(range(1, len(text))))
    assert "".join(pieces[:-60]).startswith("END END")  # shown long before the text ended
    assert not has_markers(shown, [NONCE]) and not _LEAK.search(shown), shown
    assert "RESPONSE" not in shown and shown.endswith(" x")


_PIECES = st.sampled_from(
    [
        "<",
        "<<<",
        ">",
        ">>>",
        " ",
        "\n",
        "END",
        "END ",
        "RESPONSE",
        "REVIEW",
        "QUESTION",
        "CONVERSATION",
        "response",
        " A",
        " 2",
        f" {NONCE}",
        NONCE[:7],
        NONCE[7:],
        NONCE[:8],
        NONCE[8:],
        NONCE[1:],
        NONCE[:-1],
        "e",
        "3",
        "word",
        "Paris. ",
        "E",
        "R",
    ]
)
# Independent of the filter's own regexes: a fence word next to our nonce or a bracket run. A
# marker stays on one line (blanks are spaces and tabs, at most 8 in a row: a longer gap ends it).
_LEAK = re.compile(
    rf"{NONCE}|<[ \t]{{0,8}}(?:END[ \t]{{1,8}})?(?i:RESPONSE|REVIEW|QUESTION|CONVERSATION)"
    r"|(?<![A-Za-z0-9])END[ \t]{1,8}(?:RESPONSE|REVIEW|QUESTION|CONVERSATION)(?![A-Za-z0-9])"
)


def _near_copies(nonce: str) -> set[str]:
    """Independent of core/shared/markers.py: the nonce with one digit dropped, one hex digit added inside,
    or a space inside. (One added before or after it leaves the exact nonce, which _LEAK finds.)"""
    dropped = {nonce[:i] + nonce[i + 1 :] for i in range(len(nonce))}
    added = {nonce[:i] + c + nonce[i:] for i in range(1, len(nonce)) for c in "0123456789abcdef"}
    split = {nonce[:i] + " " + nonce[i:] for i in range(1, len(nonce))}
    return dropped | added | split


NEAR = _near_copies(NONCE)


# Random: every run tries new joins (a run of 2,000 examples over 20 seeds passed; see the branch history).
@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=30), st.lists(st.integers(min_value=0, max_value=400), max_size=6))
def test_no_marker_ever_reaches_the_concatenated_stream(parts, cuts):
    text = "".join(parts)
    shown, _ = _streamed(text, sorted(min(cut, len(text)) for cut in cuts))
    assert not has_markers(shown, [NONCE])
    assert not _LEAK.search(shown), shown
    assert not [copy for copy in NEAR if copy in shown], shown
    if len(text) <= MAX_HELD:  # longer runs of marker beginnings may be shown early (see core/shared/markers.py)
        assert shown == strip_markers(text, [NONCE])
