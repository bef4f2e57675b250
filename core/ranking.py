"""Python face of the Rust ranking engine (`core._ranking`, built from rust/ by maturin).

Everything is computed in Rust (rust/ranking: parse.rs, aggregate.rs, agreement.rs,
leaderboard.rs); this module only checks argument types. Results are the binding's own frozen
classes (`ParsedRanking`, `CandidateScore`, `Rating`, described in core/_ranking.pyi). The rules
are documented there and mirrored by the pure-Python reference in tests/ranking_reference.py.

- parse_ranking: the ballot in a reviewer's text. The format (what a header is, which list forms
  count, the fallback without a header) is defined in one place, the module comment of
  rust/ranking/src/parse.rs; it is not restated here.
- parse_verdict: a judge's `VERDICT: AGREE` / `VERDICT: DISAGREE` on two answers (auto mode); the
  format is the module comment of rust/ranking/src/verdict.rs.
- parse_scores / score_summary: rubric scores in a reviewer's text (`Response A: Accuracy=8, ...`,
  lists, tables), each answer's mean per criterion and the consensus (0-100 from the scores'
  spread); the format and the formula are the module comment of rust/ranking/src/scores.rs.
- composition: which of the council's texts support each sentence of a synthesis (word-trigram
  containment) and each one's share, the chairman's own share making the sum 1; the method is the
  module comment of rust/ranking/src/composition.rs.
- parse_disagreement / measure_disagreement: the chairman's "WHERE THEY DIFFER" section (agreed,
  contested points with their sides, unique claims, open questions; members as labels, unknown ones
  dropped, lengths bounded) and, for when it writes none, the unique and agreed sentences of the
  member answers by the composition's trigram containment; the format and the measure are the
  module comment of rust/ranking/src/disagreement.rs. is_disagreement_header: whether a line opens
  that section (the engine holds the section back from the streamed answer).
- aggregate / aggregate_models: mean rank, partial-ballot Borda (a candidate at 1-based position p
  on a ballot of length m gets m - p points, unranked get 0, summed over ballots), Copeland from
  pairwise majorities over the ballots ranking both (win 1, tie 0.5, never compared 0),
  votes and first places. Order: average_rank asc (None last), borda desc, copeland desc,
  first_place_votes desc, name asc. With `weights` ({reviewer: weight}, others 1) the mean rank,
  Borda and Copeland are weighted (aggregate.rs); votes and first places stay ballot counts.
- kendall_tau: one ballot against a reference order (tau-a over their common items).
- kendall_w: Kendall's W for incomplete rankings (a ballot orders what it ranked above what it was
  shown and left out; what it was not shown is missing, not tied last): the method is the module
  comment of rust/ranking/src/agreement.rs. None below 2 ballots that order a pair.
- leaderboard: Bradley-Terry (MM iterations, prior of one virtual 0.5/0.5 comparison per pair),
  1000 + 400*log10(strength) mean-centred, percentile bootstrap over ballots (seeded
  xoshiro256++, independent of thread count).

Invalid values raise ValueError (unknown or repeated names, bad labels, confidence outside
(0, 1), ...); wrong types raise TypeError.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from core import _ranking

__all__ = [
    "CandidateScore",
    "ParsedRanking",
    "Rating",
    "aggregate",
    "aggregate_many",
    "aggregate_models",
    "composition",
    "is_disagreement_header",
    "kendall_tau",
    "kendall_w",
    "leaderboard",
    "measure_disagreement",
    "parse_disagreement",
    "parse_ranking",
    "parse_scores",
    "parse_verdict",
    "score_summary",
]

ParseStatus = Literal["complete", "partial", "none"]
Verdict = Literal["agree", "disagree", "none"]
_U64 = 1 << 64


# The binding's result classes (rust/ranking-py/src/results.rs): frozen, fields as attributes.
ParsedRanking = _ranking.ParsedRanking  # order: labels best first; status: all labels / some / nothing parsed
CandidateScore = _ranking.CandidateScore  # candidate, position, average_rank, rankings_count, borda, copeland, ...
Rating = _ranking.Rating  # model, rating (Elo-like, mean 1000), low, high (bootstrap interval), wins, comparisons


def _seq(value: object, what: str) -> list | tuple:
    """A list/tuple for the binding; a bare string is refused (it is not a sequence of names)."""
    if isinstance(value, (list, tuple)):
        return value
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"{what} must be a sequence of str, not {type(value).__name__}")
    return list(value)


def _ballot_list(ballots: object, what: str = "ballots") -> list | tuple:
    ballots = _seq(ballots, what)
    for b in ballots:
        if isinstance(b, (str, bytes)):
            raise TypeError(f"each of {what} must be a sequence of str, not {type(b).__name__}")
    return ballots


def _items(mapping: object, what: str) -> dict:
    """A dict for the binding (which reads dicts directly)."""
    if type(mapping) is dict:
        return mapping
    if not isinstance(mapping, Mapping):
        raise TypeError(f"{what} must be a mapping, not {type(mapping).__name__}")
    return dict(mapping)


def parse_ranking(text: str, labels: Sequence[str]) -> ParsedRanking:
    """The ballot in a reviewer's text: labels (single capital letters) best first."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    return _ranking.parse_ranking(text, _seq(labels, "labels"))


def parse_verdict(text: str) -> Verdict:
    """A judge's verdict on whether two answers agree; "none" when it cannot be read."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    return _ranking.parse_verdict(text)


Scores = dict[str, dict[str, float]]  # label (or model) -> criterion -> score


@dataclass(frozen=True, slots=True)
class ScoreSummary:
    means: Scores  # candidate -> criterion -> mean over the reviewers that scored it
    consensus: float | None  # 0-100 from the scores' spread; None when nothing was scored twice


def parse_scores(text: str, labels: Sequence[str], criteria: Sequence[str], low: float, high: float) -> Scores:
    """The rubric scores in a reviewer's text: label -> criterion -> score (labels scored at all)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    return _ranking.parse_scores(text, _seq(labels, "labels"), _seq(criteria, "criteria"), low, high)


def score_summary(
    sheets: Iterable[Mapping[str, Mapping[str, float]]], criteria: Sequence[str], low: float, high: float
) -> ScoreSummary:
    """Each candidate's mean per criterion and the consensus over reviewers' sheets
    (candidate -> criterion -> score, one sheet per reviewer)."""
    plain = [{c: dict(v) for c, v in _items(sheet, "a sheet").items()} for sheet in sheets]
    means, consensus = _ranking.rubric_summary(plain, _seq(criteria, "criteria"), low, high)
    return ScoreSummary(means, consensus)


@dataclass(frozen=True, slots=True)
class SentenceSupport:
    start: int  # character offsets of the sentence in the synthesis
    end: int
    words: int
    support: list[tuple[int, float]]  # (group index, containment) of each group supporting it


@dataclass(frozen=True, slots=True)
class Composition:
    shares: list[float]  # one per group of texts, in the order given
    own: float  # the chairman's own share; with the shares it sums to 1
    sentences: list[SentenceSupport]


def composition(synthesis: str, groups: Sequence[Sequence[str]]) -> Composition:
    """Where `synthesis` came from, over `groups` of texts (each member's answer; the sources)."""
    if not isinstance(synthesis, str):
        raise TypeError(f"synthesis must be str, not {type(synthesis).__name__}")
    shares, own, sentences = _ranking.composition(synthesis, [_seq(g, "a group") for g in _seq(groups, "groups")])
    return Composition(shares, own, [SentenceSupport(*s) for s in sentences])


@dataclass(frozen=True, slots=True)
class WrittenSide:
    members: list[str]  # labels, each known, on no other side of the point
    position: str


@dataclass(frozen=True, slots=True)
class WrittenPoint:
    point: str
    sides: list[WrittenSide]  # at least two


@dataclass(frozen=True, slots=True)
class WrittenDisagreement:
    agreed: list[str]
    contested: list[WrittenPoint]
    unique: list[tuple[str, str]]  # (label, claim)
    open: list[str]


@dataclass(frozen=True, slots=True)
class MeasuredDisagreement:
    agreed: list[str]  # sentences every answer supports
    unique: list[tuple[int, str]]  # (index of the answer, sentence no other answer supports)


def parse_disagreement(text: str, labels: Sequence[str]) -> WrittenDisagreement | None:
    """The last "WHERE THEY DIFFER" section of `text`; None when there is none or nothing reads."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    parsed = _ranking.parse_disagreement(text, _seq(labels, "labels"))
    if parsed is None:
        return None
    agreed, contested, unique, open_ = parsed
    points = [WrittenPoint(point, [WrittenSide(m, p) for m, p in sides]) for point, sides in contested]
    return WrittenDisagreement(agreed, points, unique, open_)


def measure_disagreement(answers: Sequence[str]) -> MeasuredDisagreement:
    """The unique and agreed sentences of the member answers (nothing for fewer than two)."""
    agreed, unique = _ranking.measure_disagreement(_seq(answers, "answers"))
    return MeasuredDisagreement(agreed, unique)


def is_disagreement_header(line: str) -> bool:
    if not isinstance(line, str):
        raise TypeError(f"line must be str, not {type(line).__name__}")
    return _ranking.is_disagreement_header(line)


_native_aggregate = _ranking.aggregate


def aggregate(
    ballots: Mapping[str, Sequence[str]],
    label_to_model: Mapping[str, str],
    *,
    exclude_self: bool = False,
    weights: Mapping[str, float] | None = None,
) -> list[CandidateScore]:
    """ballots: reviewer model id -> labels best first. Candidates: every model in label_to_model.
    exclude_self: a reviewer's own model is dropped from its own ballot before counting.
    weights: reviewer -> weight (finite, > 0; reviewers left out weigh 1), ValueError otherwise."""
    if type(ballots) is not dict:
        ballots = _items(ballots, "ballots")
    if type(label_to_model) is not dict:
        label_to_model = _items(label_to_model, "label_to_model")
    if weights is None:
        return _native_aggregate(ballots, label_to_model=label_to_model, exclude_self=bool(exclude_self))
    native = {str(k): float(v) for k, v in _items(weights, "weights").items()}
    return _native_aggregate(ballots, label_to_model=label_to_model, exclude_self=bool(exclude_self), weights=native)


def aggregate_many(
    councils: Iterable[tuple[Mapping[str, Sequence[str]], Mapping[str, str]]], *, exclude_self: bool = False
) -> list[list[CandidateScore]]:
    """`aggregate` for many councils in one call (ballots, label_to_model) each."""
    batch = [(_items(b, "ballots"), _items(m, "label_to_model")) for b, m in councils]
    return _ranking.aggregate_batch(batch, bool(exclude_self))


def aggregate_models(ballots: Sequence[Sequence[str]], candidates: Sequence[str]) -> list[CandidateScore]:
    """Same as `aggregate`, when ballots are already model ids (each a candidate, no repeats)."""
    return _native_aggregate(_ballot_list(ballots), candidates=_seq(candidates, "candidates"))


def kendall_tau(ballot: Sequence[str], reference: Sequence[str]) -> float | None:
    """Kendall's tau-a of `ballot` against `reference` (both best first) over the items both hold;
    None when fewer than 2 are common."""
    return _ranking.kendall_tau(_seq(ballot, "ballot"), _seq(reference, "reference"))


def kendall_w(
    ballots: Sequence[Sequence[str]], candidates: Sequence[str], shown: Sequence[Sequence[str]] | None = None
) -> float | None:
    """Kendall's W for incomplete rankings; `shown[k]`: the candidates ballot k was shown (default:
    every candidate). None when fewer than 2 ballots order a pair, or fewer than 2 candidates."""
    seen = None if shown is None else _ballot_list(shown, "shown")
    return _ranking.kendall_w(_ballot_list(ballots), _seq(candidates, "candidates"), seen)


def leaderboard(
    ballots: Sequence[Sequence[str]], *, rounds: int = 1000, seed: int = 0, confidence: float = 0.95
) -> list[Rating]:
    """Bradley-Terry ratings (Elo-like scale, mean 1000) of every model in `ballots` (model ids,
    best first) with percentile bootstrap intervals over ballots, best first."""
    _check_bootstrap(rounds, seed, confidence)
    return _ranking.leaderboard(_ballot_list(ballots), rounds, seed, float(confidence))


def leaderboard_counted(
    ballots: Sequence[Sequence[str]],
    counts: Sequence[int],
    *,
    rounds: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[Rating]:
    """`leaderboard` over distinct ballots, `ballots[k]` cast `counts[k]` times: the same ratings
    as the expanded list, intervals from a bootstrap whose cost grows with distinct ballots only
    (statistically equivalent, not the same draws: rust/ranking/src/leaderboard.rs)."""
    _check_bootstrap(rounds, seed, confidence)
    counts = list(_seq(counts, "counts"))
    for count in counts:
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count < _U64:
            raise ValueError(f"counts must be ints in [0, 2**64), got {count!r}")
    return _ranking.leaderboard_counted(_ballot_list(ballots), counts, rounds, seed, float(confidence))


def _check_bootstrap(rounds: object, seed: object, confidence: object) -> None:
    if isinstance(rounds, bool) or not isinstance(rounds, int):
        raise TypeError(f"rounds must be int, not {type(rounds).__name__}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be int, not {type(seed).__name__}")
    if rounds < 0:
        raise ValueError(f"rounds must be >= 0, got {rounds}")
    if not 0 <= seed < _U64:
        raise ValueError(f"seed must be in [0, 2**64), got {seed}")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
        raise TypeError(f"confidence must be float, not {type(confidence).__name__}")
