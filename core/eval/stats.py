"""The statistics of a report: Wilson 95% intervals for an accuracy, McNemar's exact test for two
configurations on the same samples, and percentiles of latency. Small enough to be exact here
(no scipy): the binomial tail is summed with integers."""

from __future__ import annotations

import math
from collections.abc import Sequence
from math import comb

Z95 = 1.959963984540054


def wilson(correct: int, total: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of `correct / total` ((0, 1) with no samples)."""
    if total == 0:
        return 0.0, 1.0
    p = correct / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def discordant(a: Sequence[bool], b: Sequence[bool]) -> tuple[int, int]:
    """(items only `a` got right, items only `b` got right), paired by position."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    only_a = sum(1 for x, y in zip(a, b) if x and not y)
    only_b = sum(1 for x, y in zip(a, b) if y and not x)
    return only_a, only_b


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: under the null each discordant pair is a fair coin, so
    p = min(1, 2 * P(X <= min(b, c))) with X ~ Binomial(b + c, 1/2); 1.0 with no discordant pair."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    tail = sum(comb(n, i) for i in range(k + 1))
    return min(1.0, 2 * tail / 2**n)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100) with linear interpolation between order statistics."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
