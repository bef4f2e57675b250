"""Type stub of the native module built from rust/ranking-py (see core/ranking.py for the typed face).

Every function returns tuples, or instances of `cls` (a class with the same field names, e.g. the
dataclasses of core.ranking) built as `cls.__new__(cls)` plus `object.__setattr__`, without calling
its __init__. Each function is overloaded on `cls` so that callers get the precise result type.
"""

from collections.abc import Sequence
from typing import Literal, TypeVar, overload

__version__: str

T = TypeVar("T")
_Score = tuple[str, int, float | None, int, float, float, int]
_Rating = tuple[str, float, float, float, float, int]
_Parsed = tuple[list[str], Literal["complete", "partial", "none"]]
_Ballots = dict[str, Sequence[str]] | Sequence[tuple[str, Sequence[str]]]  # reviewer -> labels
_LabelMap = dict[str, str] | Sequence[tuple[str, str]]  # label -> model

@overload
def parse_ranking(text: str, labels: Sequence[str], cls: None = None) -> _Parsed: ...
@overload
def parse_ranking(text: str, labels: Sequence[str], cls: type[T]) -> T: ...
@overload
def parse_many(texts: Sequence[str], labels: Sequence[str], cls: None = None) -> list[_Parsed]: ...
@overload
def parse_many(texts: Sequence[str], labels: Sequence[str], cls: type[T]) -> list[T]: ...
def parse_verdict(text: str) -> Literal["agree", "disagree", "none"]: ...
def parse_scores(
    text: str, labels: Sequence[str], criteria: Sequence[str], low: float, high: float
) -> dict[str, dict[str, float]]: ...
def composition(
    synthesis: str, groups: Sequence[Sequence[str]]
) -> tuple[list[float], float, list[tuple[int, int, int, list[tuple[int, float]]]]]: ...
def parse_disagreement(
    text: str, labels: Sequence[str]
) -> tuple[list[str], list[tuple[str, list[tuple[list[str], str]]]], list[tuple[str, str]], list[str]] | None: ...
def measure_disagreement(answers: Sequence[str]) -> tuple[list[str], list[tuple[int, str]]]: ...
def is_disagreement_header(line: str) -> bool: ...
def rubric_summary(
    sheets: Sequence[dict[str, dict[str, float]]], criteria: Sequence[str], low: float, high: float
) -> tuple[dict[str, dict[str, float]], float | None]: ...
@overload
def aggregate(
    ballots: _Ballots,
    label_to_model: _LabelMap,
    exclude_self: bool,
    cls: None = None,
    weights: dict[str, float] | None = None,
) -> list[_Score]: ...
@overload
def aggregate(
    ballots: _Ballots,
    label_to_model: _LabelMap,
    exclude_self: bool,
    cls: type[T],
    weights: dict[str, float] | None = None,
) -> list[T]: ...
@overload
def aggregate_batch(
    councils: Sequence[tuple[_Ballots, _LabelMap]], exclude_self: bool, cls: None = None
) -> list[list[_Score]]: ...
@overload
def aggregate_batch(
    councils: Sequence[tuple[_Ballots, _LabelMap]], exclude_self: bool, cls: type[T]
) -> list[list[T]]: ...
@overload
def aggregate_models(ballots: Sequence[Sequence[str]], candidates: Sequence[str], cls: None = None) -> list[_Score]: ...
@overload
def aggregate_models(ballots: Sequence[Sequence[str]], candidates: Sequence[str], cls: type[T]) -> list[T]: ...
def kendall_w(
    ballots: Sequence[Sequence[str]], candidates: Sequence[str], shown: Sequence[Sequence[str]] | None = None
) -> float | None: ...
def kendall_tau(ballot: Sequence[str], reference: Sequence[str]) -> float | None: ...
@overload
def leaderboard(
    ballots: Sequence[Sequence[str]],
    rounds: int,
    seed: int,
    confidence: float,
    threads: int = 0,
    cls: None = None,
) -> list[_Rating]: ...
@overload
def leaderboard(
    ballots: Sequence[Sequence[str]],
    rounds: int,
    seed: int,
    confidence: float,
    threads: int,
    cls: type[T],
) -> list[T]: ...
@overload
def leaderboard_counted(
    ballots: Sequence[Sequence[str]],
    counts: Sequence[int],
    rounds: int,
    seed: int,
    confidence: float,
    threads: int = 0,
    cls: None = None,
) -> list[_Rating]: ...
@overload
def leaderboard_counted(
    ballots: Sequence[Sequence[str]],
    counts: Sequence[int],
    rounds: int,
    seed: int,
    confidence: float,
    threads: int,
    cls: type[T],
) -> list[T]: ...
