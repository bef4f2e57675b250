"""How many independent votes a line-up is worth, from an eval run's per-item member correctness.

Each `member:` configuration's correctness over the items every member answered is a 0/1 vector;
two members' error correlation is Pearson's phi of those vectors, ρ̄ the mean over the pairs, and
the effective number of independent members `n_eff = n / (1 + (n − 1) ρ̄)` (the design-effect
formula of "Nine Judges, Two Effective Votes", 2026): n members whose errors are perfectly
correlated are worth one vote, n independent ones n.

A pair where one member was right (or wrong) on every item has no defined phi (a constant has no
variance): it is left out of ρ̄ and shown as null in the matrix. With fewer than two members, or
no pair defined, there is no n_eff.

The most redundant seat is the one whose removal lowers n_eff least (the remaining members' n_eff
is highest). The run does not hold the council without that seat, so what is computed is what can
be from the stored answers: the majority vote of the other members' answers on the same items,
beside the majority vote of all of them (scoring.majority's rule: ties go to the earliest member).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from core.eval.scoring import majority_index
from core.models.eval import EffectiveVotes, ErrorCorrelation, EvalSample, RedundantSeat

VoteKey = Callable[[EvalSample], str | None]  # what two answers must share to be the same vote


def phi(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Pearson's correlation of two 0/1 vectors (the phi coefficient); None when either is constant."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    n = len(a)
    if n == 0:
        return None
    both = sum(1 for x, y in zip(a, b) if x and y)
    sum_a, sum_b = sum(a), sum(b)
    denominator = sum_a * (n - sum_a) * sum_b * (n - sum_b)
    if denominator == 0:
        return None
    return (n * both - sum_a * sum_b) / math.sqrt(denominator)


def effective_number(n: int, mean_correlation: float) -> float:
    """`n / (1 + (n − 1) ρ̄)`; a negative ρ̄ can make it exceed n (members that err on opposite items)."""
    denominator = 1 + (n - 1) * mean_correlation
    return n / denominator if denominator > 0 else float(n)


def matrix(members: Sequence[str], vectors: dict[str, list[bool]]) -> list[list[float | None]]:
    return [[1.0 if a == b else phi(vectors[a], vectors[b]) for b in members] for a in members]


def mean_correlation(members: Sequence[str], table: list[list[float | None]]) -> float | None:
    values = [table[i][j] for i in range(len(members)) for j in range(i + 1, len(members))]
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None


def _n_eff(members: Sequence[str], vectors: dict[str, list[bool]]) -> tuple[float | None, float | None]:
    if len(members) < 2:
        return None, None
    rho = mean_correlation(members, matrix(members, vectors))
    return rho, (effective_number(len(members), rho) if rho is not None else None)


def member_vectors(
    by_config: dict[str, list[EvalSample]], members: Sequence[str]
) -> tuple[list[str], dict[str, list[bool]]]:
    """The items every member answered (dataset order) and each member's correctness on them."""
    indexed = {name: {s.item_id: s for s in by_config.get(name) or []} for name in members}
    common = [s.item_id for s in sorted(by_config.get(members[0]) or [], key=lambda s: s.position)]
    common = [item for item in common if all(item in indexed[name] for name in members)]
    return common, {name: [indexed[name][item].correct for item in common] for name in members}


def measure(
    by_config: dict[str, list[EvalSample]], names: Sequence[str], vote_key: VoteKey
) -> tuple[EffectiveVotes, ErrorCorrelation] | None:
    """The run's effective votes and error correlation matrix, from its `member:` configurations
    (None with fewer than two)."""
    members = [n for n in names if n.startswith("member:") and by_config.get(n)]
    if len(members) < 2:
        return None
    items, vectors = member_vectors(by_config, members)
    table = matrix(members, vectors)
    rho = mean_correlation(members, table)
    n_eff = effective_number(len(members), rho) if rho is not None else None
    votes = EffectiveVotes(
        members=len(members),
        items=len(items),
        mean_correlation=rho,
        n_eff=n_eff,
        most_redundant=_most_redundant(by_config, members, items, vectors, vote_key) if n_eff is not None else None,
    )
    return votes, ErrorCorrelation(members=members, phi=table)


def _most_redundant(
    by_config: dict[str, list[EvalSample]],
    members: list[str],
    items: list[str],
    vectors: dict[str, list[bool]],
    vote_key: VoteKey,
) -> RedundantSeat | None:
    candidates = []
    for index, seat in enumerate(members):
        rest = [m for m in members if m != seat]
        _, remaining = _n_eff(rest, vectors)
        if remaining is not None:
            candidates.append((-remaining, index, seat, remaining))
    if not candidates:
        return None
    _, _, seat, remaining = min(candidates)
    rest = [m for m in members if m != seat]
    return RedundantSeat(
        seat=seat,
        n_eff_without=remaining,
        vote_accuracy=majority_accuracy(by_config, members, items, vote_key),
        vote_accuracy_without=majority_accuracy(by_config, rest, items, vote_key),
    )


def majority_accuracy(
    by_config: dict[str, list[EvalSample]], members: Sequence[str], items: Sequence[str], vote_key: VoteKey
) -> float | None:
    """How often the majority of `members`' stored answers (ties: the earliest member) was right."""
    if not items:
        return None
    indexed = {name: {s.item_id: s for s in by_config[name]} for name in members}
    right = 0
    for item in items:
        answers = [indexed[name][item] for name in members]
        right += answers[majority_index([vote_key(a) for a in answers])].correct
    return right / len(items)
