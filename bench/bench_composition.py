"""Benchmark of the composition measure (issue 33): where a synthesis came from, over the members'
answers, computed in Rust (rust/ranking/src/composition.rs) through `core.ranking.composition`.

The case of the issue: a synthesis of 1,000 words over four answers of 1,000 words (and, as a
second line, the same with ten 300-word web sources). The synthesis borrows a third of its
sentences from the answers, a sixth from the sources, and writes the rest itself, so every path of
the measure runs. Words come from a 5,000-word vocabulary (seeded), sentences of 8 to 20 words.
Reported: the median (held against the budget of 5 ms) and 95th percentile of --repeat calls, in
milliseconds; and the pure-Python reference (tests/ranking_reference.py) on the same input, as a ratio.

    python bench/bench_composition.py
    python bench/bench_composition.py --repeat 500
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.ranking import composition  # noqa: E402
from tests import ranking_reference as ref  # noqa: E402

BUDGET_MS = 5.0


def _sentence(rng: random.Random, vocabulary: list[str]) -> str:
    return " ".join(rng.choice(vocabulary) for _ in range(rng.randint(8, 20))).capitalize() + "."


def _text(rng: random.Random, vocabulary: list[str], words: int) -> list[str]:
    sentences: list[str] = []
    while sum(len(s.split()) for s in sentences) < words:
        sentences.append(_sentence(rng, vocabulary))
    return sentences


def case(seed: int, sources: int) -> tuple[str, list[list[str]]]:
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(5000)]
    answers = [_text(rng, vocabulary, 1000) for _ in range(4)]
    web = [_text(rng, vocabulary, 300) for _ in range(sources)]
    synthesis: list[str] = []
    while sum(len(s.split()) for s in synthesis) < 1000:
        roll = rng.random()
        if roll < 1 / 3:
            synthesis.append(rng.choice(rng.choice(answers)))
        elif roll < 1 / 2 and web:
            synthesis.append(rng.choice(rng.choice(web)))
        else:
            synthesis.append(_sentence(rng, vocabulary))
    groups = [[" ".join(a)] for a in answers] + [[" ".join(s) for s in web]]
    return " ".join(synthesis), groups


def timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    print(f"{'case':<44} {'median':>8} {'p95':>8} {'budget':>7} {'python ref':>11}")
    for name, sources in (
        ("1,000-word synthesis, four 1,000-word answers", 0),
        ("same + ten 300-word web sources", 10),
    ):
        synthesis, groups = case(33, sources)
        measured = composition(synthesis, groups)
        assert abs(sum(measured.shares) + measured.own - 1) < 1e-9
        rust = timed(lambda s=synthesis, g=groups: composition(s, g), args.repeat)
        python = timed(lambda s=synthesis, g=groups: ref.composition(s, g), max(3, args.repeat // 50))
        median, p95 = statistics.median(rust), statistics.quantiles(rust, n=20)[-1]
        ratio = statistics.median(python) / median
        verdict = "ok" if median < BUDGET_MS else "OVER"  # p95 shows a shared machine's stalls
        print(f"{name:<44} {median:>6.3f}ms {p95:>6.3f}ms {verdict:>7} {ratio:>9.0f}x slower")
    shares = ", ".join(f"{s:.2f}" for s in measured.shares)
    print(f"\nshares of the last case: answers and sources [{shares}], chairman's own {measured.own:.2f}")


if __name__ == "__main__":
    main()
