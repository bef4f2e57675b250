"""Charts (matplotlib, the optional `charts` extra): leaderboard ratings with their bootstrap 95%
intervals, and an eval's accuracy against cost per question."""

from __future__ import annotations

from typing import Any

from core.models import Leaderboard, counted
from core.models.eval import EvalReport


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display on servers
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise SystemExit("The chart needs matplotlib: pip install -e '.[charts]'") from exc
    return plt


def leaderboard_png(board: Leaderboard, path: str) -> None:
    plt = _pyplot()
    rows = list(reversed(board.rows))  # best at the top
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(rows) + 1.5))
    ys = range(len(rows))
    ratings = [r.rating for r in rows]
    errors = [[r.rating - r.low for r in rows], [r.high - r.rating for r in rows]]
    ax.errorbar(ratings, list(ys), xerr=errors, fmt="o", capsize=4)
    ax.set_yticks(list(ys), [r.model for r in rows])
    ax.set_xlabel("Bradley-Terry rating (95% bootstrap interval)")
    ax.set_title(f"Council leaderboard: {counted(board.councils, 'council')}, {counted(board.ballots, 'ballot')}")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def eval_png(report: EvalReport, path: str) -> None:
    """One point per configuration: accuracy (with its 95% interval) against cost per question;
    model calls per question when no configuration has a known cost (local models)."""
    plt = _pyplot()
    by_cost = any(row.cost_usd for row in report.configs)
    fig, ax = plt.subplots(figsize=(8, 5))
    for row in report.configs:
        x = (row.cost_usd or 0.0) if by_cost else row.mean_calls
        errors = [[row.accuracy - row.ci_low], [row.ci_high - row.accuracy]]
        ax.errorbar([x], [row.accuracy], yerr=errors, fmt="o", capsize=4)
        ax.annotate(row.name, (x, row.accuracy), textcoords="offset points", xytext=(6, 4), fontsize=8)
    ax.set_xlabel("cost per question (USD)" if by_cost else "model calls per question")
    ax.set_ylabel("accuracy (95% Wilson interval)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"council eval {report.run}: {report.dataset}")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
