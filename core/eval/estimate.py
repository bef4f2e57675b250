"""Calls and cost of a run before it starts (what is left of it, when resumed).

Calls per question: a member or the chairman alone 1; `quick` 3 (two seats, the chairman);
`standard` 2n+1 with n seats (answers, one review each, the synthesis); `auto` at most as many
as `standard` (it escalates only when the first two answers disagree); `refine` `standard`'s and one
call per seat per revision round (COUNCIL_ROUNDS, at most: rounds stop early); self-consistency
and Self-MoA (k samples and the aggregation) as many as `standard` (equal compute); `--scorer
judge` adds one call per sample. Cost: MODEL_PRICES at
an assumed size of call (local models cost nothing); a model without a price makes it unknown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from core.eval.configs import ConfigSpec
from core.models import seats
from core.settings import Settings

ASSUMED_PROMPT_TOKENS = 800  # an answer's prompt is smaller, a review's larger
ASSUMED_COMPLETION_TOKENS = 300


@dataclass
class Estimate:
    calls: int = 0
    cost_usd: float = 0.0
    unpriced: list[str] = field(default_factory=list)  # models without a price: cost unknown


def standard_calls(members: Sequence[str]) -> int:
    return 2 * len(members) + 1


def calls_per_question(spec: ConfigSpec, members: Sequence[str], rounds: int = 1) -> int:
    if spec.kind in ("member", "chairman"):
        return 1
    if spec.mode == "quick":
        return 3
    if spec.mode == "refine":
        return standard_calls(members) + rounds * len(members)
    if spec.kind == "self-moa" and spec.samples:
        return spec.samples + 1
    return standard_calls(members)


def models_of(spec: ConfigSpec, members: Sequence[str], chairman: str) -> list[str]:
    if spec.kind == "member" and spec.model:
        return [spec.model]
    if spec.kind == "chairman":
        return [seats.primary(chairman)]
    if spec.kind in ("self-consistency", "self-moa"):
        return [spec.model or seats.primary(members[0])]
    return [seats.primary(seat) for seat in [*members, chairman]]


def estimate(
    settings: Settings,
    pending: dict[ConfigSpec, int],
    members: Sequence[str],
    chairman: str,
    *,
    self_consistency_samples: int | None = None,
    self_moa_samples: int | None = None,
    judge: str | None = None,
) -> Estimate:
    """`pending`: samples still to score per configuration."""
    result = Estimate()
    for spec, count in pending.items():
        if not count:
            continue
        per_question = calls_per_question(spec, members, settings.council.rounds or 1)
        if spec.kind == "self-consistency" and self_consistency_samples:
            per_question = self_consistency_samples
        if spec.kind == "self-moa" and self_moa_samples:
            per_question = self_moa_samples + 1
        models = models_of(spec, members, chairman)
        _add(result, settings, models, per_question * count)
        if judge:
            _add(result, settings, [judge], count)
    return result


def _add(result: Estimate, settings: Settings, models: Sequence[str], calls: int) -> None:
    result.calls += calls
    prices = []
    for model in models:
        if model.startswith("local:"):
            prices.append(0.0)
        elif model in settings.providers.model_prices:
            prompt, completion = settings.providers.model_prices[model]
            prices.append((prompt * ASSUMED_PROMPT_TOKENS + completion * ASSUMED_COMPLETION_TOKENS) / 1e6)
        elif model not in result.unpriced:
            result.unpriced.append(model)
    if prices:
        result.cost_usd += calls * sum(prices) / len(prices)
