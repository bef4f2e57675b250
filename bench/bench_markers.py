"""Benchmark of core/shared/markers.py: what keeping markers out of a council's texts costs.

(a) a filter for a new council (fresh nonces: nothing cached for them yet)
(b) strip_markers on a 5 kB answer (prose, and prose that names "Response A" and echoes markers)
(c) the same answers streamed through a MarkerFilter in 4-character pieces (a token each)

  python bench/bench_markers.py
  python bench/bench_markers.py --repeat 20
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from core.shared.fences import new_nonce
from core.shared.markers import MarkerFilter, strip_markers

PROSE = (
    "The answer depends on the trade-offs. In short, Paris is the capital of France, and it has been "
    "since the tenth century; the other cities named in the question were capitals only briefly. "
)
NAMING = "Response A explains the trade-offs clearly; RESPONSE B misses the edge case. END of the REVIEW. "


def _answer(sentence: str, size: int = 5000) -> str:
    return (sentence * (size // len(sentence) + 1))[:size]


def _stream(text: str, nonces: tuple[str, ...]) -> str:
    markers = MarkerFilter(nonces)
    shown = [markers.feed(text[i : i + 4]) for i in range(0, len(text), 4)]
    return "".join(shown) + markers.flush()


def _timed(label: str, run: Callable[[], object], repeat: int, per: str = "call") -> None:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    best, median = min(times), statistics.median(times)
    print(f"  {label:<58} best {best * 1e3:8.3f} ms  median {median * 1e3:8.3f} ms per {per}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    print("(a) a filter for a new council")
    _timed("MarkerFilter(two fresh nonces)", lambda: MarkerFilter((new_nonce(), new_nonce())), args.repeat)

    nonces = (new_nonce(), new_nonce())
    MarkerFilter(nonces)  # warm: what a council's later filters cost
    _timed("MarkerFilter(the same nonces again)", lambda: MarkerFilter(nonces), args.repeat)
    echo = f"<<<RESPONSE A {nonces[0]}>>>\n" + _answer(NAMING, 4900) + f"\n<<<END RESPONSE A {nonces[0]}>>>"
    texts = {"plain prose": _answer(PROSE), "names responses": _answer(NAMING), "echoes markers": echo}
    print("(b) strip_markers on a 5 kB answer")
    for name, text in texts.items():
        _timed(name, lambda text=text: strip_markers(text, nonces), args.repeat)
    print("(c) the same answer streamed in 4-character pieces")
    for name, text in texts.items():
        _timed(name, lambda text=text: _stream(text, nonces), args.repeat)


if __name__ == "__main__":
    main()
