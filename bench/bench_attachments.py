"""How long reading attachments takes (core/reading/attachments), to size COUNCIL_ATTACHMENT_MAX_PAGES.

Files are generated in memory (tests/attachment_files.py): a PDF of N pages with ~600 characters
of text each, a DOCX of N paragraphs plus a table, and a text file of the same size. Each is read
with `extract_file` under the default limits (100,000 characters, 200 pages) and with the
character limit lifted, best of --repeat runs.

    python bench/bench_attachments.py
    python bench/bench_attachments.py --pages 500 --repeat 5
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from core.reading.attachments import AttachmentLimits, extract_file
from tests.attachment_files import make_docx, make_pdf

LINE = "The council reads this page of the quarterly report and weighs each figure. "


def best_of(repeat: int, name: str, data: bytes, limits: AttachmentLimits) -> tuple[float, int]:
    best = float("inf")
    chars = 0
    for _ in range(repeat):
        started = time.perf_counter()
        attachment = extract_file(name, data, limits=limits)
        best = min(best, time.perf_counter() - started)
        chars = attachment.char_count
    return best, chars


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    page_text = LINE * 8  # ~600 characters
    files = {
        "report.pdf": make_pdf([f"{n} {page_text}" for n in range(args.pages)]),
        "report.docx": make_docx([f"{n} {page_text}" for n in range(args.pages)], table=[["a", "b"], ["1", "2"]]),
        "report.txt": "\n".join(f"{n} {page_text}" for n in range(args.pages)).encode(),
    }
    default = AttachmentLimits()
    unlimited = AttachmentLimits(max_chars=10**9, max_pages=10**6)
    print(f"{args.pages} pages/paragraphs of ~{len(page_text)} characters, best of {args.repeat}")
    for name, data in files.items():
        for label, limits in (("default limits", default), ("no char limit", unlimited)):
            seconds, chars = best_of(args.repeat, name, data, limits)
            print(f"  {name:12} {len(data) / 1024:8.0f} KB  {label:15} {seconds * 1000:8.1f} ms  {chars:>9,} chars")


if __name__ == "__main__":
    main()
