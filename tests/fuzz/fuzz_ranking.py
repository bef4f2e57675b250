"""Differential fuzzing of the Rust ranking engine (atheris / libFuzzer).

Each input drives: parse_ranking on arbitrary text (must never crash, must agree with the
Python reference, output a clean subset of the labels), aggregate / kendall_w on ballots derived
from the same bytes (must agree with the reference, W in [0, 1]), and a small leaderboard.

    pip install atheris
    python tests/fuzz/fuzz_ranking.py -max_total_time=60          # from the repository root
    python tests/fuzz/fuzz_ranking.py -runs=100000 corpus_dir/

Not collected by pytest (no test_ prefix); the bounded property tests live in tests/ and rust/.
"""

from __future__ import annotations

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import atheris  # noqa: E402

with atheris.instrument_imports():
    from core import ranking  # noqa: E402
    from tests import ranking_reference as ref  # noqa: E402

LETTERS = "ABCDEFG"
SNIPPETS = ["FINAL RANKING", ":", "\n", "1. ", "- ", "Response ", " > ", ", ", "**", "\r\n", "\u00a0", "：", "＞"]


def one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    n_labels = fdp.ConsumeIntInRange(0, 7)
    labels = list(LETTERS[:n_labels])
    if fdp.ConsumeBool():
        # text assembled from meaningful snippets and random unicode
        parts = []
        for _ in range(fdp.ConsumeIntInRange(0, 30)):
            if fdp.ConsumeBool():
                parts.append(SNIPPETS[fdp.ConsumeIntInRange(0, len(SNIPPETS) - 1)])
            else:
                parts.append(fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 6)))
        text = "".join(parts)
    else:
        text = fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 2000))

    got = ranking.parse_ranking(text, labels)
    assert got == ref.parse_ranking(text, labels), (text, labels, got)
    assert len(set(got.order)) == len(got.order) and set(got.order) <= set(labels)

    # ballots over the labels, from the remaining bytes
    ballots = {}
    for r in range(fdp.ConsumeIntInRange(0, 6)):
        k = fdp.ConsumeIntInRange(0, n_labels)
        pool = labels[:]
        ballot = []
        for _ in range(k):
            ballot.append(pool.pop(fdp.ConsumeIntInRange(0, len(pool) - 1)))
        ballots[f"model-{LETTERS[r % 7]}{r}"] = ballot
    label_to_model = {x: f"model-{x}{i}" for i, x in enumerate(labels)}
    exclude = fdp.ConsumeBool()
    assert ranking.aggregate(ballots, label_to_model, exclude_self=exclude) == \
        ref.aggregate(ballots, label_to_model, exclude_self=exclude)
    models = [[label_to_model[x] for x in b] for b in ballots.values()]
    w = ranking.kendall_w(models, list(label_to_model.values()))
    w_ref = ref.kendall_w(models, list(label_to_model.values()))
    assert (w is None) == (w_ref is None)
    if w is not None:
        assert 0.0 <= w <= 1.0 and abs(w - w_ref) < 1e-9
    board = ranking.leaderboard(models, rounds=fdp.ConsumeIntInRange(0, 5), seed=fdp.ConsumeIntInRange(0, 2**64 - 1))
    for r in board:
        assert math.isfinite(r.rating) and r.low <= r.high


def main() -> None:
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
