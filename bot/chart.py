"""Leaderboard chart: ratings with their bootstrap 95% intervals (matplotlib, optional extra)."""

from __future__ import annotations

from core.models import Leaderboard, counted


def leaderboard_png(board: Leaderboard, path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display on servers
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise SystemExit("The chart needs matplotlib: pip install -e '.[charts]'") from exc
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
