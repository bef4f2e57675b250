"""Bias audit of reviewers, from the running totals of their stored ballots
(core/storage/reviewer_totals.py):

- position bias: how often a reviewer ranks first the answer it was shown first; a position-blind
  reviewer does so at the mean of 1/n over its ballots (n: answers shown), the `expected` rate;
- self-preference (only measurable with COUNCIL_EXCLUDE_SELF=false): how often it ranks its own
  answer first, over the ballots that showed it its own answer, against the same 1/n;
- length bias: Pearson's r between an answer's length and its rank position (0 best, 1 worst on
  each ballot); below 0 means longer answers are ranked higher, the fair value is 0.

Rates carry a 95% Wilson interval, the correlation a 95% Fisher-z interval; a check is `flagged`
when its interval excludes the fair value, and never below MIN_BALLOTS ballots.

The correlation is withheld (no r, no interval; `withheld` says why in one word) where the sample
cannot support one: "pairs" when every ballot ranked two answers (within a ballot, length and
rank then agree or disagree completely: r is +1 or -1 by construction), "few" below MIN_BALLOTS
ballots, "equal" when the answers all had one length.
"""

from __future__ import annotations

import math

from core.models import MIN_BALLOTS, BiasEntry, CorrelationCheck, RateCheck, Withheld
from core.storage.reviewer_totals import ReviewerTotals

Z95 = 1.959963984540054


def wilson(hits: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of hits/n (None when n is 0)."""
    if n <= 0:
        return None
    p = hits / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def fisher_interval(r: float, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Fisher-z interval of a correlation r over n pairs (None below 4 pairs)."""
    if n < 4:
        return None
    r = max(-0.999999, min(0.999999, r))
    centre, half = math.atanh(r), z / math.sqrt(n - 3)
    return math.tanh(centre - half), math.tanh(centre + half)


def rate_check(hits: int, n: int, expected_sum: float) -> RateCheck | None:
    if n <= 0:
        return None
    expected = expected_sum / n
    interval = wilson(hits, n)
    low, high = interval if interval else (None, None)
    flagged = n >= MIN_BALLOTS and low is not None and high is not None and not low <= expected <= high
    return RateCheck(rate=hits / n, expected=expected, ballots=n, low=low, high=high, flagged=flagged)


def correlation_check(t: ReviewerTotals) -> CorrelationCheck | None:
    n = t.len_n
    if t.len_ballots <= 0 or n <= 0:
        return None
    vx = n * t.len_sxx - t.len_sx**2
    vy = n * t.len_syy - t.len_sy**2
    withheld: Withheld | None = None
    if n == 2 * t.len_ballots:
        withheld = "pairs"
    elif t.len_ballots < MIN_BALLOTS:
        withheld = "few"
    elif not (vx > 1e-9 * max(1.0, n * t.len_sxx) and vy > 0):
        withheld = "equal"
    if withheld is not None:
        return CorrelationCheck(
            correlation=None, pairs=n, ballots=t.len_ballots, low=None, high=None, flagged=False, withheld=withheld
        )
    r = max(-1.0, min(1.0, (n * t.len_sxy - t.len_sx * t.len_sy) / math.sqrt(vx * vy)))
    low, high = fisher_interval(r, n) or (None, None)
    flagged = low is not None and high is not None and not low <= 0.0 <= high
    return CorrelationCheck(correlation=r, pairs=n, ballots=t.len_ballots, low=low, high=high, flagged=flagged)


def audit(totals: dict[str, ReviewerTotals]) -> list[BiasEntry]:
    """One entry per reviewer with at least one counted ballot, by reviewer name."""
    entries = []
    for reviewer, t in sorted(totals.items()):
        position = rate_check(t.first_hits, t.ballots, t.expected_sum)
        if position is None:
            continue
        entries.append(
            BiasEntry(
                reviewer=reviewer,
                first_position_rate=position.rate,
                expected=position.expected,
                ballots=position.ballots,
                low=position.low,
                high=position.high,
                flagged=position.flagged,
                self_preference=rate_check(t.self_hits, t.self_ballots, t.self_expected_sum),
                length=correlation_check(t),
            )
        )
    return entries
