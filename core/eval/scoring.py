"""What an answer says, and whether it is right: the rules of the four scorers and of the
majority vote, in one place (the inspect scorers in core/eval/tasks.py call these).

Every prompt asks for a last line `ANSWER: <answer>`; `final_answer` takes what follows the
last such marker (any case, markdown around it tolerated), else the last non-empty line.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Literal

from core.eval.dataset import EvalItem

ScorerName = Literal["exact", "numeric", "choice", "judge"]
SCORERS: tuple[ScorerName, ...] = ("exact", "numeric", "choice", "judge")
NUMERIC_REL_TOL = 1e-6
ANSWER_INSTRUCTION = "End your reply with one last line of the form: ANSWER: <your final answer>"
CHOICE_INSTRUCTION = "End your reply with one last line of the form: ANSWER: <letter>"

_ANSWER_MARK = re.compile(r"(?im)^[\s>*_#`-]*(?:final\s+)?answer\s*[*_`]*\s*[:：][\s*_`]*(.*)$")
_NUMBER = re.compile(r"[-−]?\$?\d[\d,]*(?:\.\d+)?|[-−]?\$?\.\d+")
# A number alone: thousands separators only in groups of three ("3,9,17" is a list, "1,000" a number)
_PLAIN_NUMBER = re.compile(r"^[-+]?\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$|^[-+]?\$?\.\d+$")
_LETTER = re.compile(r"\(?\b([A-Z])\b\)?")
_MARKUP = str.maketrans("", "", "*`_\"'“”‘’")  # markdown emphasis and quotes around an answer


def final_answer(text: str) -> str:
    """The text after the last `ANSWER:` line marker, else the last non-empty line."""
    marks = [m.group(1).strip() for m in _ANSWER_MARK.finditer(text or "")]
    marks = [m for m in marks if m]
    if marks:
        return marks[-1]
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def normalise(text: str) -> str:
    """Case, markdown, quotes, spacing and final punctuation folded; a number in canonical form
    (`1,000.50` and `1000.5` are equal)."""
    text = unicodedata.normalize("NFKC", text).translate(_MARKUP).strip().lower()
    text = re.sub(r"\s+", " ", text).strip(" .!;:")
    number = parse_number(text) if _PLAIN_NUMBER.match(text) else None
    return _canonical(number) if number is not None else re.sub(r"\s*,\s*", ", ", text)


def parse_number(text: str) -> Decimal | None:
    """The last number written in `text` (thousands separators and a $ allowed), or None."""
    found = _NUMBER.findall(text or "")
    if not found:
        return None
    raw = found[-1].replace(",", "").replace("$", "").replace("−", "-")
    try:
        return Decimal(raw)
    except InvalidOperation:
        return None


def _canonical(number: Decimal) -> str:
    text = format(number.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def is_number(text: str) -> bool:
    return bool(_PLAIN_NUMBER.match(text.strip()))


def default_scorer(items: Sequence[EvalItem]) -> ScorerName:
    """numeric when every target is a number, choice when every item has choices, else exact."""
    if items and all(item.choices for item in items):
        return "choice"
    if items and all(is_number(item.target) for item in items):
        return "numeric"
    return "exact"


# --------------------------------------------------------------------------- the rules


def exact_correct(response: str, target: str) -> bool:
    return normalise(final_answer(response)) == normalise(target)


def numeric_value(response: str) -> Decimal | None:
    """The number of the final answer line, else the last number of the whole response."""
    return parse_number(final_answer(response)) or parse_number(response)


def numeric_correct(response: str, target: str) -> bool:
    expected, given = parse_number(target), numeric_value(response)
    if expected is None or given is None:
        return False
    return math.isclose(float(given), float(expected), rel_tol=NUMERIC_REL_TOL, abs_tol=1e-12)


def choice_letter(response: str, choices: Sequence[str]) -> str | None:
    """The letter the answer picked: a lone capital letter (A, (B), C.) on the final answer line,
    else the choice whose text the final answer is."""
    answer = final_answer(response)
    letters = {chr(ord("A") + i) for i in range(len(choices))}
    for match in _LETTER.finditer(answer):
        if match.group(1) in letters:
            return match.group(1)
    spoken = normalise(answer)
    for index, choice in enumerate(choices):
        if normalise(choice) == spoken:
            return chr(ord("A") + index)
    return None


def choice_target(target: str, choices: Sequence[str]) -> str:
    """A target given as a letter, or as the text of one of the choices, as its letter."""
    stripped = target.strip()
    if len(stripped) == 1 and stripped.upper().isalpha():
        return stripped.upper()
    for index, choice in enumerate(choices):
        if normalise(choice) == normalise(stripped):
            return chr(ord("A") + index)
    return stripped


def choice_correct(response: str, item: EvalItem) -> bool:
    return choice_letter(response, item.choices) == choice_target(item.target, item.choices)


def vote_key(response: str, scorer: ScorerName, item: EvalItem) -> str | None:
    """What two samples must share to count as the same answer in a majority vote (None: the
    sample said nothing usable and gets no vote)."""
    if scorer == "numeric":
        value = numeric_value(response)
        return _canonical(value) if value is not None else None
    if scorer == "choice":
        return choice_letter(response, item.choices)
    key = normalise(final_answer(response))
    return key or None


def majority(responses: Sequence[str], scorer: ScorerName, item: EvalItem) -> int:
    """Index of the sample whose answer most samples share; ties go to the earliest sample.
    With no usable answer at all, the first sample."""
    return majority_index([vote_key(r, scorer, item) for r in responses])


def majority_index(keys: Sequence[str | None]) -> int:
    """Index of the most shared vote key (ties: the earliest; no usable key at all: 0)."""
    counts: dict[str, int] = {}
    for key in keys:
        if key is not None:
            counts[key] = counts.get(key, 0) + 1
    if not counts:
        return 0
    best = max(counts.values())
    return next(i for i, key in enumerate(keys) if key is not None and counts[key] == best)


def prompt(item: EvalItem, scorer: ScorerName) -> str:
    """The question as every configuration is asked it."""
    if item.choices:
        options = "\n".join(f"{chr(ord('A') + i)}) {choice}" for i, choice in enumerate(item.choices))
        return f"{item.input}\n\n{options}\n\n{CHOICE_INSTRUCTION}"
    return f"{item.input}\n\n{ANSWER_INSTRUCTION}"
