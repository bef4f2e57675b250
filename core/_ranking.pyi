"""Type stub of the native module built from rust/ranking-py (see core/ranking.py for the typed face).

Results are the module's own frozen classes (rust/ranking-py/src/results.rs): read-only attributes,
equal when their fields are, printed like dataclasses. Names in them are the caller's string objects.
"""

from collections.abc import Sequence
from typing import Literal, final

__version__: str

_Ballots = dict[str, Sequence[str]] | Sequence[tuple[str, Sequence[str]]]  # reviewer -> labels
_LabelMap = dict[str, str] | Sequence[tuple[str, str]]  # label -> model

@final
class ParsedRanking:
    @property
    def order(self) -> list[str]: ...  # labels best first, a subset of the labels, no repeats
    @property
    def status(self) -> Literal["complete", "partial", "none"]: ...  # all labels / some / nothing parsed
    def __new__(cls, order: list[str], status: str) -> ParsedRanking: ...

@final
class CandidateScore:
    @property
    def candidate(self) -> str: ...  # model id
    @property
    def position(self) -> int: ...  # 1-based final place, deterministic tie-breaking
    @property
    def average_rank(self) -> float | None: ...  # mean 1-based position over ballots that ranked it
    @property
    def rankings_count(self) -> int: ...  # ballots that ranked it ("votes")
    @property
    def borda(self) -> float: ...  # sum over ballots of m - p (p: 1-based position, m: ballot length)
    @property
    def copeland(self) -> float: ...  # pairwise majorities: win 1, tie 0.5
    @property
    def first_place_votes(self) -> int: ...
    def __new__(
        cls,
        candidate: str,
        position: int,
        average_rank: float | None,
        rankings_count: int,
        borda: float,
        copeland: float,
        first_place_votes: int,
    ) -> CandidateScore: ...

@final
class Rating:
    @property
    def model(self) -> str: ...
    @property
    def rating(self) -> float: ...  # Elo-like, mean 1000
    @property
    def low(self) -> float: ...  # bootstrap percentile interval
    @property
    def high(self) -> float: ...
    @property
    def wins(self) -> float: ...  # pairwise wins
    @property
    def comparisons(self) -> int: ...  # pairwise comparisons taken part in
    def __new__(cls, model: str, rating: float, low: float, high: float, wins: float, comparisons: int) -> Rating: ...

def parse_ranking(text: str, labels: Sequence[str]) -> ParsedRanking: ...
def parse_many(texts: Sequence[str], labels: Sequence[str]) -> list[ParsedRanking]: ...
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
def aggregate(
    ballots: _Ballots | Sequence[Sequence[str]],
    *,
    label_to_model: _LabelMap | None = None,
    candidates: Sequence[str] | None = None,
    exclude_self: bool = False,
    weights: dict[str, float] | None = None,
) -> list[CandidateScore]:
    """Ballots to one ranking, best first. With `label_to_model`: ballots of labels by reviewer. With
    `candidates`: ballots of candidates, by reviewer ({reviewer: names}) or of no one in particular
    (a sequence of name sequences). `exclude_self` and `weights` need ballots by reviewer."""

def aggregate_batch(
    councils: Sequence[tuple[_Ballots, _LabelMap]], exclude_self: bool
) -> list[list[CandidateScore]]: ...
def kendall_w(
    ballots: Sequence[Sequence[str]], candidates: Sequence[str], shown: Sequence[Sequence[str]] | None = None
) -> float | None: ...
def kendall_tau(ballot: Sequence[str], reference: Sequence[str]) -> float | None: ...
def leaderboard(
    ballots: Sequence[Sequence[str]], rounds: int, seed: int, confidence: float, threads: int = 0
) -> list[Rating]: ...
def leaderboard_counted(
    ballots: Sequence[Sequence[str]],
    counts: Sequence[int],
    rounds: int,
    seed: int,
    confidence: float,
    threads: int = 0,
) -> list[Rating]: ...
