"""Benchmark of the disagreement account (rust/ranking/src/disagreement.rs, through core.ranking):
reading a chairman's "WHERE THEY DIFFER" section, and the measured account used when it writes
none, for four answers of 1,000 words (the budget: under 5 ms for both together).

The answers share 12 sentences with every other answer and 12 with one other, and the rest is
their own, so that every path of the measure runs (agreed, unique, neither).
Words come from a 5,000-word vocabulary (seeded), sentences of 8 to 20 words. The section is a
1,000-word synthesis followed by a section of every part (40 items, some with unknown labels).
Reported: the median and 95th percentile of --repeat calls, in milliseconds.

    python bench/bench_disagreement.py
    python bench/bench_disagreement.py --repeat 500
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

from core.ranking import measure_disagreement, parse_disagreement  # noqa: E402

BUDGET_MS = 5.0
LABELS = ["A", "B", "C", "D"]


def _sentence(rng: random.Random, vocabulary: list[str]) -> str:
    return " ".join(rng.choice(vocabulary) for _ in range(rng.randint(8, 20))).capitalize() + "."


def answers(seed: int) -> list[str]:
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(5000)]
    shared = [_sentence(rng, vocabulary) for _ in range(12)]  # in every answer
    pairs = [[_sentence(rng, vocabulary) for _ in range(12)] for _ in range(2)]  # in two answers each
    out = []
    for i in range(4):
        text = shared + pairs[i // 2]
        while sum(len(s.split()) for s in text) < 1000:
            text.append(_sentence(rng, vocabulary))
        rng.shuffle(text)
        out.append(" ".join(text))
    return out


def section(seed: int) -> str:
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(5000)]
    synthesis = " ".join(_sentence(rng, vocabulary) for _ in range(70))
    lines = ["", "## Where they differ", "**Agreed:**"]
    lines += [f"- {_sentence(rng, vocabulary)}" for _ in range(10)]
    lines.append("**Contested:**")
    for _ in range(5):
        lines.append(f"- {_sentence(rng, vocabulary)}")
        lines += [f"  - Response {rng.choice([*LABELS, 'Z'])}: {_sentence(rng, vocabulary)}" for _ in range(3)]
    lines.append("**Unique:**")
    lines += [f"- Response {rng.choice([*LABELS, 'Q'])}: {_sentence(rng, vocabulary)}" for _ in range(10)]
    lines.append("**Open:**")
    lines += [f"- {_sentence(rng, vocabulary)}" for _ in range(5)]
    return synthesis + "\n".join(lines)


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
    texts, written = answers(40), section(40)
    measured = measure_disagreement(texts)
    parsed = parse_disagreement(written, LABELS)
    assert measured.agreed and measured.unique and parsed is not None and parsed.contested
    cases = [
        ("parse the section (1,000-word synthesis + section)", lambda: parse_disagreement(written, LABELS)),
        ("measure four 1,000-word answers", lambda: measure_disagreement(texts)),
        ("both", lambda: (parse_disagreement(written, LABELS), measure_disagreement(texts))),
    ]
    print(f"{'case':<52} {'median':>8} {'p95':>8} {'budget':>7}")
    for name, fn in cases:
        times = sorted(timed(fn, args.repeat))
        median, p95 = statistics.median(times), times[int(len(times) * 0.95) - 1]
        verdict = "ok" if median < BUDGET_MS else "OVER"
        print(f"{name:<52} {median:>6.3f}ms {p95:>6.3f}ms {verdict:>7}")
    counts = f"{len(measured.agreed)} agreed, {len(measured.unique)} unique"
    print(f"measured: {counts}; read: {len(parsed.contested)} contested")


if __name__ == "__main__":
    main()
