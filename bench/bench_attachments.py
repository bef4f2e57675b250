"""What reading attachments costs: ordinary files in this process, hostile files in reader processes.

Part 1 (ordinary files, to size COUNCIL_ATTACHMENT_MAX_PAGES): a PDF of N pages with ~600
characters of text each, a DOCX of N paragraphs plus a table, and a text file of the same size,
read with `extract_file` under the default limits (100,000 characters, 200 pages) and with the
character limit lifted, best of --repeat runs.

Part 2 (issue 28): each hostile file of tests/hostile_files.py read the way the bot reads it, in
a reader process (`AttachmentReaders`, default deadline and memory ceiling), with its wall time
and the reader process's peak resident memory (VmHWM, measured inside the reader when it
replies, or from /proc just before it is killed), and the start-up cost of a reader: a fork of
the fork server against a fresh interpreter importing the parsers (what `spawn` would pay).

    python bench/bench_attachments.py
    python bench/bench_attachments.py --pages 500 --repeat 5 --skip-ordinary
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time

# Imports stay inside functions: multiprocessing runs this module again in every reader process
# (as `__mp_main__`), which must not pay for the test helpers.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

LINE = "The council reads this page of the quarterly report and weighs each figure. "


def ordinary(pages: int, repeat: int) -> None:
    from core.reading.attachments import AttachmentLimits
    from core.reading.attachments.extract import extract_file
    from tests.attachment_files import make_docx, make_pdf

    page_text = LINE * 8  # ~600 characters
    files = {
        "report.pdf": make_pdf([f"{n} {page_text}" for n in range(pages)]),
        "report.docx": make_docx([f"{n} {page_text}" for n in range(pages)], table=[["a", "b"], ["1", "2"]]),
        "report.txt": "\n".join(f"{n} {page_text}" for n in range(pages)).encode(),
    }
    default = AttachmentLimits()
    unlimited = AttachmentLimits(max_chars=10**9, max_pages=10**6)
    print(
        f"Ordinary files, in this process: {pages} pages/paragraphs of ~{len(page_text)} characters, best of {repeat}"
    )
    for name, data in files.items():
        for label, limits in (("default limits", default), ("no char limit", unlimited)):
            best = float("inf")
            chars = 0
            for _ in range(repeat):
                started = time.perf_counter()
                chars = extract_file(name, data, limits=limits).char_count
                best = min(best, time.perf_counter() - started)
            print(f"  {name:12} {len(data) / 1024:8.0f} KB  {label:15} {best * 1000:8.1f} ms  {chars:>9,} chars")
    print()


async def hostile() -> None:
    from core.reading.attachments import AttachmentReaders, AttachmentRefusal, ReaderLimits
    from tests.hostile_files import HOSTILE, docx_empty_paragraphs

    limits = ReaderLimits()
    readers = AttachmentReaders(limits)
    await readers.read("warm-up.txt", b"starts the fork server")
    print(
        f"Hostile files, each in a reader process (deadline {limits.deadline_s:g} s, "
        f"ceiling {limits.memory_bytes // 2**20} MB):"
    )
    print(f"  {'file':18} {'size':>9} {'time':>9} {'peak RSS':>9}  outcome")
    for name, make in {**HOSTILE, "empty.docx": docx_empty_paragraphs}.items():
        data = make()
        read = await readers.read(name, data)
        outcome = (
            read.outcome.reason
            if isinstance(read.outcome, AttachmentRefusal)
            else f"{read.outcome.char_count:,} chars; " + " / ".join(read.outcome.notices)
        )
        peak = f"{read.peak_rss_kb / 1024:.0f} MB" if read.peak_rss_kb else "?"
        print(f"  {name:18} {len(data) / 2**20:7.1f} MB {read.seconds:8.2f} s {peak:>9}  {outcome[:110]}")
    await readers.aclose()


def fresh_interpreter(repeat: int) -> list[float]:
    """What a reader would cost without the fork server: a new interpreter importing the parsers."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import core.reading.attachments.worker"], check=True, env=_env())
        times.append(time.perf_counter() - started)
    return times


async def startup(repeat: int, fresh: list[float]) -> None:
    from core.reading.attachments import AttachmentReaders

    readers = AttachmentReaders()
    started = time.perf_counter()
    await readers.read("first.txt", b"x")
    first = time.perf_counter() - started
    forks = []
    for _ in range(repeat):
        started = time.perf_counter()
        await readers.read("small.txt", b"a few words")
        forks.append(time.perf_counter() - started)
    await readers.aclose()
    print("Reader start-up (one small text file, median of", repeat, "runs):")
    print(f"  first read (starts the fork server)       {first * 1000:8.1f} ms")
    print(f"  forked reader, whole read                 {sorted(forks)[len(forks) // 2] * 1000:8.1f} ms")
    print(f"  fresh interpreter importing the parsers   {sorted(fresh)[len(fresh) // 2] * 1000:8.1f} ms (spawn)\n")


def _env() -> dict[str, str]:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return {**os.environ, "PYTHONPATH": root}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-ordinary", action="store_true")
    args = parser.parse_args()
    if not args.skip_ordinary:
        ordinary(args.pages, args.repeat)
    repeat = max(args.repeat, 5)
    asyncio.run(startup(repeat, fresh_interpreter(repeat)))  # first: it starts the fork server
    asyncio.run(hostile())


if __name__ == "__main__":
    main()
