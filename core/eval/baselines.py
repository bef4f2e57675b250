"""The equal-compute baselines of a run, settled once: self-consistency's and Self-MoA's model and k.

Their model is the one named (`self-consistency:<id>`, `self-moa:<id>`), else the run's most
accurate member, else the first seat. Their k matches `standard`'s mean model calls in the run
(else its planned calls, 2n + 1), rounded: self-consistency asks k samples, Self-MoA k − 1 samples
and one aggregation. Settled once per run and saved in its plan, so a resumed run asks as the
first sitting did. A model the provider does not list is refused before anything runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from core.errors import ConfigurationError
from core.eval import estimate, report
from core.eval.configs import ConfigSpec
from core.models import seats
from core.models.eval import EvalPlan, EvalSample
from core.providers.base import ProviderError
from core.providers.router import ProviderRouter

Baseline = Literal["self-consistency", "self-moa"]


def settled(plan: EvalPlan, kind: Baseline) -> bool:
    if kind == "self-consistency":
        return plan.self_consistency_model is not None and plan.self_consistency_samples is not None
    return plan.self_moa_model is not None and plan.self_moa_samples is not None


def settle(plan: EvalPlan, specs: Sequence[ConfigSpec], stored: Sequence[EvalSample], kind: Baseline) -> None:
    """Set `kind`'s model and k in `plan` from the samples stored so far."""
    by_config: dict[str, list[EvalSample]] = {}
    for sample in stored:
        by_config.setdefault(sample.config, []).append(sample)
    spec = next(s for s in specs if s.kind == kind)
    best = report.best_member([s.name for s in specs], by_config)
    model = spec.model or (best.removeprefix("member:") if best else seats.primary(plan.members[0]))
    standard = by_config.get("standard")
    calls = sum(s.calls for s in standard) / len(standard) if standard else estimate.standard_calls(plan.members)
    if kind == "self-consistency":
        plan.self_consistency_model, plan.self_consistency_samples = model, max(1, round(calls))
    else:
        plan.self_moa_model, plan.self_moa_samples = model, max(1, round(calls) - 1)


async def require_known(router: ProviderRouter, specs: Sequence[ConfigSpec]) -> None:
    """ConfigurationError (one line) for a configuration naming a model the provider does not list."""
    for spec in specs:
        if spec.model is None or spec.kind not in ("member", "self-consistency", "self-moa"):
            continue
        try:
            unknown = await router.unknown_models([spec.model])
        except ProviderError as exc:
            raise ConfigurationError(f"--configs {spec.name}: {exc.info().short()}") from None
        if unknown:
            raise ConfigurationError(
                f"--configs {spec.name}: the provider lists no model {spec.model!r} "
                "(check the id against its model list; `council doctor` lists problems)"
            )
