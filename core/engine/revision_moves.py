"""Whether a revision moved, toward whom, and whether a round's answers converged: measured with the
composition method of the Rust module (word-trigram support per sentence, rust/ranking/src/composition.rs),
never asked of the members (a model's account of what changed its mind is not evidence).

- New sentences: the revision's sentences (3 words or more) that its own previous answer does not
  support. Its `new_share` is their share of its words.
- Moved: `new_share` >= MOVED_SHARE. A member that said KEEP, or whose revision is mostly its previous
  answer, held.
- Toward: the other members whose answers support the new sentences, each credited with a sentence's
  words in proportion to its containment there; those credited with TOWARD_SHARE of the revision's
  words or more, most first.
- Converged: every member's answer is supported by the other members' answers for at least
  CONVERGED of its words (1 minus composition's own share, over the others as groups)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from core import ranking

MOVED_SHARE = 0.3
TOWARD_SHARE = 0.1
CONVERGED = 0.8
_MIN_WORDS = 3  # shorter sentences weigh nothing in the composition method


@dataclass(frozen=True)
class Move:
    moved: bool
    new_share: float
    toward: list[str] = field(default_factory=list)


def measure_move(revision: str, previous: str, others: Sequence[tuple[str, str]]) -> Move:
    """`others`: (model id, its latest answer) of every other member."""
    measured = ranking.composition(revision, [[previous], *([text] for _, text in others)])
    total = new = 0
    credit = [0.0] * len(others)
    for sentence in measured.sentences:
        if sentence.words < _MIN_WORDS:
            continue
        total += sentence.words
        if any(group == 0 for group, _ in sentence.support):
            continue  # its previous answer already said it
        new += sentence.words
        supporters = [(group, containment) for group, containment in sentence.support if group > 0]
        weight = sum(containment for _, containment in supporters)
        for group, containment in supporters:
            credit[group - 1] += sentence.words * containment / weight
    if not total:
        return Move(moved=False, new_share=0.0)
    share = new / total
    if share < MOVED_SHARE:
        return Move(moved=False, new_share=share)
    ranked = sorted(((c, i) for i, c in enumerate(credit) if c / total >= TOWARD_SHARE), key=lambda x: (-x[0], x[1]))
    return Move(moved=True, new_share=share, toward=list(dict.fromkeys(others[i][0] for _, i in ranked)))


def convergence(texts: Sequence[str]) -> float | None:
    """The least share of any answer that the others support (None below two answers)."""
    if len(texts) < 2:
        return None
    least = 1.0
    for index, text in enumerate(texts):
        others = [[other] for j, other in enumerate(texts) if j != index]
        least = min(least, 1.0 - ranking.composition(text, others).own)
    return least
