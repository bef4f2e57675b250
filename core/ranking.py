"""Python face of the Rust ranking module (`core._ranking`).

Model ids and labels are mapped to indices here; all computation happens in Rust (see
rust/ranking/src/*.rs for the documented formulas).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping, Sequence

from core import _ranking

Status = Literal["complete", "partial", "none"]


@dataclass(frozen=True)
class ParsedRanking:
    order: list[str]  # labels best first: a subset of the labels, without repeats
    status: Status


@dataclass(frozen=True)
class CandidateScore:
    candidate: str
    position: int
    average_rank: float | None
    rankings_count: int
    borda: float
    copeland: float
    first_place_votes: int


@dataclass(frozen=True)
class Rating:
    model: str
    rating: float
    low: float
    high: float
    wins: float
    comparisons: int


def parse_ranking(text: str, labels: Sequence[str]) -> ParsedRanking:
    """The ballot in `text` over `labels` (single letters). Never invents an order."""
    order, status = _ranking.parse_ranking(text, list(labels))
    return ParsedRanking(order, status)  # type: ignore[arg-type]


def parse_many(texts: Sequence[str], labels: Sequence[str]) -> list[ParsedRanking]:
    return [ParsedRanking(order, status) for order, status in _ranking.parse_many(list(texts), list(labels))]  # type: ignore[arg-type]


def _indexed(ballots: Sequence[Sequence[str]], candidates: Sequence[str]) -> tuple[list[str], list[list[int]]]:
    names = sorted(set(candidates))  # sorted: ties break by name, whatever the input order
    index = {name: i for i, name in enumerate(names)}
    indexed = []
    for ballot in ballots:
        seen: list[int] = []
        for name in ballot:
            if name not in index:
                raise ValueError(f"ballot names {name!r}, which is not a candidate")
            if index[name] not in seen:
                seen.append(index[name])
        indexed.append(seen)
    return names, indexed


def aggregate_models(ballots: Sequence[Sequence[str]], candidates: Sequence[str]) -> list[CandidateScore]:
    """Aggregate ballots of model ids (best first) over `candidates`, best first."""
    names, indexed = _indexed(ballots, candidates)
    return [
        CandidateScore(names[c], position, mean, count, borda, copeland, firsts)
        for c, position, mean, count, borda, copeland, firsts in _ranking.aggregate(indexed, len(names))
    ]


def aggregate(
    ballots: Mapping[str, Sequence[str]], label_to_model: Mapping[str, str], *, exclude_self: bool = False
) -> list[CandidateScore]:
    """Aggregate reviewer -> labels ballots. With `exclude_self`, a reviewer's own model is
    dropped from its ballot before counting (self-preference)."""
    model_ballots = []
    for reviewer, labels in ballots.items():
        unknown = [label for label in labels if label not in label_to_model]
        if unknown:
            raise ValueError(f"ballot of {reviewer!r} names unknown label(s) {unknown}")
        models = [label_to_model[label] for label in labels]
        if exclude_self:
            models = [m for m in models if m != reviewer]
        model_ballots.append(models)
    return aggregate_models(model_ballots, list(label_to_model.values()))


def kendall_w(ballots: Sequence[Sequence[str]], candidates: Sequence[str]) -> float | None:
    """Kendall's W with tie correction (missing candidates tie at the bottom); None if undefined."""
    names, indexed = _indexed(ballots, candidates)
    return _ranking.kendall_w(indexed, len(names))


def leaderboard(
    ballots: Sequence[Sequence[str]], *, rounds: int = 1000, seed: int = 0, confidence: float = 0.95
) -> list[Rating]:
    """Bradley-Terry ratings (Elo-like scale, mean 1000) with bootstrap intervals, best first."""
    names = sorted({name for ballot in ballots for name in ballot})
    index = {name: i for i, name in enumerate(names)}
    indexed = [list(dict.fromkeys(index[name] for name in ballot)) for ballot in ballots]
    rows = _ranking.leaderboard(indexed, len(names), rounds, seed, confidence)
    return [Rating(names[c], rating, low, high, wins, comparisons) for c, rating, low, high, wins, comparisons in rows]
