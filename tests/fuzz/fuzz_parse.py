"""Fuzz target: parse_ranking (Rust, core._ranking) against the pure-Python reference.

    pip install atheris
    python tests/fuzz/fuzz_parse.py -max_total_time=60          # libFuzzer flags pass through
    python tests/fuzz/fuzz_parse.py -runs=200000 -dict=...       # etc.

Coverage guidance comes from the Python reference (instrumented by atheris); it has the same
branch structure as rust/ranking/src/parse.rs, so inputs that reach new reference branches also
reach new Rust branches. Each input is decoded into a label set and a text built from
ranking-shaped fragments (headers, markers, tokens, CRLF/NBSP/full-width/zero-width) mixed with
raw Unicode. Checked on every input:
  * neither implementation raises; Rust never panics (a panic would surface as an exception);
  * Rust == reference (order and status);
  * the order is a subset of the labels without repeats, and the status matches its length.
"""

from __future__ import annotations

import os
import sys

import atheris

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

with atheris.instrument_imports():
    from tests import ranking_reference as ref

from core.ranking import parse_ranking  # noqa: E402  (native: not instrumented)

FRAGMENTS = [
    "FINAL RANKING", "final ranking", "**FINAL RANKING:**", "## Final Ranking", "Final Rankings",
    "F\u200bINAL R\u200bANKING", "FINAL\u200b RANKING", "\ufeff", "\u00ad", "\u200c", "\u2060",
    ":", "：", "-", "—", "=", "(best first)", "\n", "\r\n", "\r", "\n\n", " ", "  ", "    ", "\t",
    "\u00a0", "\u3000", "1. ", "2. ", "3) ", "4: ", "**1.** ", "#1. ", "10. ", "- ", "* ", "+ ", "• ",
    "Response ", "response ", "**Response ", "**", "__", "`", "[", "]", "(", ")", "\"", "'",
    " > ", ">", "->", "=>", "→", "＞", ", ", "，", "、", "; ", ".", "。",
    "A", "B", "C", "D", "E", "Z", "a", "b", "Ａ", "Ｂ", "I", "good", "is best", "because", "Overall,",
]
LETTERS = "ABCDE"


def build(fdp: atheris.FuzzedDataProvider) -> tuple[str, list[str]]:
    mask = fdp.ConsumeIntInRange(0, 31)
    labels = [c for i, c in enumerate(LETTERS) if mask >> i & 1]
    parts: list[str] = []
    for _ in range(fdp.ConsumeIntInRange(0, 60)):
        if fdp.ConsumeIntInRange(0, 7) == 0:
            parts.append(fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 6)))
        else:
            parts.append(FRAGMENTS[fdp.ConsumeIntInRange(0, len(FRAGMENTS) - 1)])
    return "".join(parts), labels


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    if fdp.ConsumeBool():
        text, labels = build(fdp)
    else:
        labels = [c for c in LETTERS[: fdp.ConsumeIntInRange(0, 5)]]
        text = fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes())
    got = parse_ranking(text, labels)
    want = ref.parse_ranking(text, labels)
    if got != want:
        raise AssertionError(f"Rust {got} != reference {want} for {text!r} {labels}")
    order = got.order
    assert len(set(order)) == len(order) and set(order) <= set(labels), (text, labels, got)
    status = "none" if not order else "complete" if len(order) == len(labels) else "partial"
    assert got.status == status, (text, labels, got)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
