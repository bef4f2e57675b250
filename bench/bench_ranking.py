"""Benchmark of the Rust ranking engine (core.ranking / core._ranking) against the pure-Python
reference (tests/ranking_reference.py) on the same inputs.

  (a) parse 10,000 reviewer texts (realistic: prose, markdown, a FINAL RANKING list)
  (b) aggregate 100,000 councils of 4-5 members (mean rank, Borda, Copeland, votes)
  (c) leaderboard: Bradley-Terry + 1,000 bootstrap rounds over 100,000 ballots

    python bench/bench_ranking.py                    # full sizes
    python bench/bench_ranking.py --scale 0.1        # quicker

The reference leaderboard is far too slow for 1,000 rounds over 100,000 ballots: it runs with
--ref-rounds rounds (default 2) plus the point fit, and the 1,000-round time is extrapolated
linearly (fixed part + rounds x per-round time). The output says so.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from core import (
    _ranking,
    ranking,
)
from tests import ranking_reference as ref

MODELS = ["openai/gpt-5.1", "anthropic/claude-sonnet-4.5", "google/gemini-3-pro", "x-ai/grok-4", "meta/llama-4"]
PROSE = [
    "Response {x} explains the trade-offs clearly and gives a worked example.",
    "**Response {x}** misses the edge case where the input is empty, which matters here.",
    "I found Response {x} verbose; it repeats the question before answering it.",
    "Response {x} is accurate, but the code sample would not compile as written.",
    "A good answer needs to address the concurrency issue, and Response {x} does so well.",
]
LIST_FORMS = [
    lambda order: "\n".join(f"{i}. Response {x}" for i, x in enumerate(order, 1)),
    lambda order: "\n".join(
        f"{i}. **Response {x}** - {random.choice(['best', 'solid', 'weak', 'wrong'])}" for i, x in enumerate(order, 1)
    ),
    lambda order: "\n".join(f"- Response {x}" for x in order),
    lambda order: " > ".join(order),
    lambda order: ", ".join(f"Response {x}" for x in order),
]


def review_text(rng: random.Random, labels: list[str]) -> str:
    order = rng.sample(labels, len(labels))
    paragraphs = ["## Evaluation", ""]
    for x in labels:
        paragraphs.append(" ".join(rng.choice(PROSE).format(x=x) for _ in range(rng.randint(2, 4))))
        paragraphs.append("")
    header = rng.choice(["FINAL RANKING:", "**FINAL RANKING:**", "## Final Ranking", "Final ranking -"])
    text = "\n".join(paragraphs) + header + "\n" + rng.choice(LIST_FORMS)(order)
    if rng.random() < 0.3:
        text += "\n\nLet me know if you want more detail."
    return text.replace("\n", "\r\n") if rng.random() < 0.1 else text


def council(rng: random.Random) -> tuple[dict[str, list[str]], dict[str, str]]:
    members = rng.sample(MODELS, rng.randint(4, 5))
    labels = [chr(ord("A") + i) for i in range(len(members))]
    label_to_model = dict(zip(labels, members))
    ballots = {}
    for reviewer in members:
        ballot = rng.sample(labels, len(labels))
        if rng.random() < 0.15:
            ballot = ballot[: rng.randint(1, len(labels) - 1)]  # partial ballot
        ballots[reviewer] = ballot
    return ballots, label_to_model


def timed(fn, repeat: int = 1) -> tuple[float, object]:
    """Best wall time of `repeat` runs (the machine may be shared: the best run is the least
    disturbed), with the cyclic garbage collector off while timing, as timeit does."""
    best, out = float("inf"), None
    for _ in range(repeat):
        out = None
        gc.collect()
        gc.disable()
        try:
            started = time.perf_counter()
            out = fn()
            best = min(best, time.perf_counter() - started)
        finally:
            gc.enable()
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every size")
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--ref-rounds", type=int, default=2)
    args = parser.parse_args()
    n_texts, n_councils, n_ballots = (max(10, int(x * args.scale)) for x in (10_000, 100_000, 100_000))
    rng = random.Random(42)
    rows = []
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())

    # (a) parsing
    labels_sets = [["A", "B", "C", "D"], ["A", "B", "C", "D", "E"]]
    texts = [(t := rng.choice(labels_sets), review_text(rng, t)) for _ in range(n_texts)]
    avg_len = sum(len(t) for _, t in texts) / len(texts)
    t_rust, got = timed(lambda: [ranking.parse_ranking(t, labels) for labels, t in texts], 3)
    t_ref, want = timed(lambda: [ref.parse_ranking(t, labels) for labels, t in texts])
    assert got == want, "Rust and reference disagree on parsing"
    assert sum(p.status == "complete" for p in got) == len(got), "bench texts should all parse"
    four = [t for labels, t in texts if len(labels) == 4]
    t_batch, _ = timed(lambda: _ranking.parse_many(four, labels_sets[0]), 3)
    t_ref4, _ = timed(lambda: [ref.parse_ranking(t, labels_sets[0]) for t in four])
    rows.append((f"(a) parse {n_texts:,} texts (~{avg_len:.0f} chars), per call", t_rust, t_ref, ""))
    rows.append((f"    _ranking.parse_many batch ({len(four):,} texts, 4 labels)", t_batch, t_ref4, ""))

    # (b) aggregation
    councils = [council(rng) for _ in range(n_councils)]
    t_rust, got = timed(lambda: [ranking.aggregate(b, m) for b, m in councils], 3)
    t_ref, want = timed(lambda: [ref.aggregate(b, m) for b, m in councils])
    assert got == want, "Rust and reference disagree on aggregation"
    t_many, many = timed(lambda: ranking.aggregate_many(councils), 3)
    assert many == got
    pre = [(list(b.items()), list(m.items())) for b, m in councils]
    t_native, _ = timed(lambda: _ranking.aggregate_batch(pre, False), 3)
    rows.append((f"(b) aggregate {n_councils:,} councils, per call", t_rust, t_ref, ""))
    rows.append(("    aggregate_many", t_many, t_ref, ""))
    rows.append(("    _ranking.aggregate_batch (items() done before)", t_native, t_ref, ""))

    # (c) leaderboard
    strength = {m: i for i, m in enumerate(MODELS)}
    ballots = [
        sorted(MODELS, key=lambda m: strength[m] + rng.gauss(0, 1.2))[: rng.choice([3, 4, 5])] for _ in range(n_ballots)
    ]
    t_rust, board = timed(lambda: ranking.leaderboard(ballots, rounds=args.rounds, seed=0), 3)
    t0, _ = timed(lambda: ref.leaderboard(ballots, rounds=0))
    tk, sample = timed(lambda: ref.leaderboard(ballots, rounds=args.ref_rounds, seed=0))
    per_round = max(0.0, tk - t0) / max(1, args.ref_rounds)
    t_ref = t0 + args.rounds * per_round
    check = ranking.leaderboard(ballots, rounds=args.ref_rounds, seed=0)
    for a, b in zip(check, sample):
        assert a.model == b.model and abs(a.rating - b.rating) < 1e-6 and abs(a.low - b.low) < 1e-6, (a, b)
    rows.append(
        (
            f"(c) leaderboard {n_ballots:,} ballots x {args.rounds} rounds",
            t_rust,
            t_ref,
            f"ref extrapolated from {args.ref_rounds} rounds",
        )
    )

    print(f"wall times, gc off while timing; rust: best of 3 runs, reference: 1 run; load average at start: {load}")
    width = max(len(r[0]) for r in rows)
    print(f"{'task':<{width}}  {'rust s':>9}  {'python ref s':>12}  {'ratio':>8}  note")
    print("-" * (width + 50))
    for name, rust_s, ref_s, note in rows:
        print(f"{name:<{width}}  {rust_s:>9.4f}  {ref_s:>12.3f}  {ref_s / rust_s:>7.1f}x  {note}")
    print()
    print("leaderboard (rust):")
    for r in board:
        print(f"  {r.model:<30} {r.rating:8.1f}  [{r.low:7.1f}, {r.high:7.1f}]  wins {r.wins:>9.0f} / {r.comparisons}")
    print(f"cores: {os.cpu_count()}  python {sys.version.split()[0]}  core._ranking {_ranking.__version__}")


if __name__ == "__main__":
    main()
