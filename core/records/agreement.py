"""How often two reviewers rank alike, from the stored ballots: for each pair of reviewers, over
the councils where both cast a ballot, the answer pairs both ranked, and the share of them both
put in the same order (1: they always agree, 0.5: no more than chance between two orders, 0: they
always disagree). The figure is agreement between members, not accuracy: chat history has no
right answer to measure it against.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations

from core.models.browse import BallotAgreement


def concordance(a: Sequence[str], b: Sequence[str]) -> tuple[int, int]:
    """(pairs of answers both ballots order alike, pairs both ballots rank)."""
    place_a = {model: i for i, model in enumerate(a)}
    place_b = {model: i for i, model in enumerate(b)}
    common = [model for model in a if model in place_b]
    alike = total = 0
    for x, y in combinations(common, 2):
        total += 1
        alike += (place_a[x] < place_a[y]) == (place_b[x] < place_b[y])
    return alike, total


def agreement(ballots: Iterable[tuple[str, str, list[str]]]) -> BallotAgreement | None:
    """`ballots`: (council id, reviewer, ranked models); None with fewer than two reviewers."""
    by_council: dict[str, dict[str, list[str]]] = {}
    for council, reviewer, order in ballots:
        by_council.setdefault(council, {})[reviewer] = order
    reviewers = sorted({r for cast in by_council.values() for r in cast})
    if len(reviewers) < 2:
        return None
    index = {r: i for i, r in enumerate(reviewers)}
    size = len(reviewers)
    alike = [[0] * size for _ in range(size)]
    pairs = [[0] * size for _ in range(size)]
    councils = [[0] * size for _ in range(size)]
    for cast in by_council.values():
        for x, y in combinations(sorted(cast), 2):
            same, total = concordance(cast[x], cast[y])
            i, j = index[x], index[y]
            for a, b in ((i, j), (j, i)):
                alike[a][b] += same
                pairs[a][b] += total
                councils[a][b] += 1
    share = [
        [1.0 if i == j else (alike[i][j] / pairs[i][j] if pairs[i][j] else None) for j in range(size)]
        for i in range(size)
    ]
    return BallotAgreement(reviewers=reviewers, agreement=share, pairs=pairs, councils=councils)
