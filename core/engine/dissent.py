"""Minority views: reviewers whose ballot disagrees with the council's aggregate ranking.

A reviewer dissents when its ballot disagrees with the aggregate order on at least one pair of the
answers it ranked (its Kendall tau against that order is defined and below 1), and either that tau
is below 0 or it ranks first an answer the aggregate places in the bottom half (below place
ceil(n/2) of n). A ballot of one answer (a reviewer shown a single answer, as in a degraded
council) or one that follows the aggregate order disagrees with nothing, wherever its first
choice ended up.
Its reason is the sentence of its evaluation that names the answer it preferred ("Response X"),
else the evaluation's first sentence, clipped. `dissent_line` is the one text every interface
shows for it (Slack, Discord, terminal, export).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from core import ranking
from core.models import Aggregate, Dissent, Review
from core.models.text import clip
from core.shared.fences import RANKING_HEADER

REASON_CHARS = 220

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_MARKDOWN = re.compile(r"[*_`#>]+")


def reviewer_taus(reviews: Iterable[Review], aggregate: Aggregate) -> dict[str, float]:
    """Each ballot's Kendall tau against the aggregate order (reviewers with 2+ ranked in common)."""
    order = [e.model for e in aggregate.entries if e.average_rank is not None]
    taus = {}
    for review in reviews:
        tau = ranking.kendall_tau(review.ballot_models, order) if review.ballot_models else None
        if tau is not None:
            taus[review.reviewer] = tau
    return taus


def find_dissent(reviews: Iterable[Review], aggregate: Aggregate) -> list[Dissent]:
    places = {e.model: e.position for e in aggregate.entries if e.average_rank is not None}
    bottom = math.ceil(len(places) / 2)  # places above this are the bottom half
    out = []
    for review in reviews:
        if not review.ballot_models:
            continue
        tau = aggregate.reviewer_tau.get(review.reviewer)
        if tau is None or tau >= 1.0:
            continue
        preferred = review.ballot_models[0]
        place = places.get(preferred)
        if not (tau < 0 or (place is not None and place > bottom)):
            continue
        label = review.ballot_labels[0] if review.ballot_labels else None
        out.append(
            Dissent(
                reviewer=review.reviewer,
                preferred=preferred,
                preferred_label=label,
                place=place,
                tau=tau,
                reason=reason(review.text or "", label),
            )
        )
    return out


def reason(evaluation: str, label: str | None) -> str:
    """The sentence that says why: the first naming `Response <label>`, else the first one."""
    body = evaluation.split(RANKING_HEADER)[0]  # the ranking list is not a reason
    sentences = [s for s in (_MARKDOWN.sub("", part).strip() for part in _SENTENCE_END.split(body)) if s]
    if not sentences:
        return ""
    chosen = sentences[0]
    if label:
        mention = re.compile(rf"\bresponse\s+{re.escape(label)}\b", re.IGNORECASE)
        chosen = next((s for s in sentences if mention.search(s)), chosen)
    return clip(" ".join(chosen.split()), REASON_CHARS)
