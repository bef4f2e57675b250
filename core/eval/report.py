"""A run's report from its stored samples: per configuration the accuracy with its Wilson 95%
interval, mean model calls, tokens and cost per question, p50/p95 latency, `auto`'s escalations,
and McNemar's exact test against the best single member on the items both answered; the members'
effective independent votes (core/eval/independence.py) and each council's accuracy by consensus
band with its unsure threshold (core/eval/doubt.py)."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

from core.eval import doubt, independence, stats
from core.eval.independence import VoteKey
from core.eval.scoring import final_answer, normalise
from core.models.eval import TOKEN_SLACK, ConfigReport, EvalReport, EvalSample


def best_member(names: Sequence[str], by_config: dict[str, list[EvalSample]]) -> str | None:
    """The most accurate `member:` configuration (ties: the earliest named)."""
    best, best_accuracy = None, -1.0
    for name in names:
        samples = by_config.get(name) or []
        if not name.startswith("member:") or not samples:
            continue
        accuracy = sum(s.correct for s in samples) / len(samples)
        if accuracy > best_accuracy:
            best, best_accuracy = name, accuracy
    return best


def build(
    run_id: str,
    dataset: str,
    names: Sequence[str],
    samples: Sequence[EvalSample],
    items: int,
    vote_key: VoteKey | None = None,
    **extra: object,
) -> EvalReport:
    """`vote_key`: what makes two stored answers the same vote (default: their final answer as
    written), for the majority votes of the most redundant seat."""
    by_config: dict[str, list[EvalSample]] = {name: [] for name in names}
    for sample in samples:
        by_config.setdefault(sample.config, []).append(sample)
    reference = best_member(names, by_config)
    best = by_config.get(reference or "") or []
    rows = tokens_over_standard([_figures(name, by_config[name], best, reference) for name in names])
    complete = all(len(by_config[name]) >= items for name in names)
    measured = independence.measure(by_config, names, vote_key or _written_answer)
    consensus = [c for name in names if (c := doubt.report(name, by_config[name], best, reference)) is not None]
    return EvalReport(
        run=run_id,
        dataset=dataset,
        configs=rows,
        effective_votes=measured[0] if measured else None,
        error_correlation=measured[1] if measured else None,
        consensus=consensus,
        items=items,
        complete=complete,
        **extra,  # type: ignore[arg-type]
    )


def tokens_over_standard(rows: list[ConfigReport]) -> list[ConfigReport]:
    """The rows, each flagged with its tokens per question beyond standard's when over TOKEN_SLACK."""
    standard = next((r for r in rows if r.name == "standard"), None)
    if standard is None or not standard.tokens:
        return rows
    return [
        row.model_copy(update={"tokens_over_standard": round(row.tokens / standard.tokens - 1, 4)})
        if row is not standard and row.tokens > TOKEN_SLACK * standard.tokens
        else row
        for row in rows
    ]


def _written_answer(sample: EvalSample) -> str | None:
    return normalise(final_answer(sample.answer)) or None


def _figures(name: str, samples: list[EvalSample], reference: list[EvalSample], versus: str | None) -> ConfigReport:
    n = len(samples)
    correct = sum(s.correct for s in samples)
    low, high = stats.wilson(correct, n)
    costs = [s.cost_usd for s in samples if s.cost_usd is not None]
    latencies = [s.latency_s for s in samples]
    p_value, wins, losses = None, 0, 0
    if versus is not None and versus != name and reference:
        mine = {s.item_id: s.correct for s in samples}
        theirs = {s.item_id: s.correct for s in reference}
        common = [item for item in mine if item in theirs]
        wins, losses = stats.discordant([mine[i] for i in common], [theirs[i] for i in common])
        p_value = stats.mcnemar_exact(wins, losses)
    escalations = [s.escalated for s in samples if s.escalated is not None]
    return ConfigReport(
        name=name,
        accuracy=correct / n if n else 0.0,
        ci_low=low,
        ci_high=high,
        mean_calls=fmean(s.calls for s in samples) if n else 0.0,
        tokens=fmean(s.prompt_tokens + s.completion_tokens for s in samples) if n else 0.0,
        cost_usd=sum(costs) / n if costs else None,
        latency_p50_s=stats.percentile(latencies, 50),
        latency_p95_s=stats.percentile(latencies, 95),
        p_value=p_value,
        escalated=sum(escalations) if escalations else None,
        samples=n,
        correct=correct,
        errors=sum(1 for s in samples if s.error),
        versus=versus if versus != name else None,
        wins=wins,
        losses=losses,
    )
