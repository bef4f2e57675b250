"""The functions of core/ and bot/ of a limit's length or longer (default 50 lines, def to last line),
longest first. The rule is that every function stays under 50 (tests/test_function_length.py).

    python scripts/long_functions.py            # those of 50 lines or more; exit status 1 if any
    python scripts/long_functions.py --top 10   # the ten longest, whatever their length
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "bot")


def function_lengths(root: Path = ROOT) -> list[tuple[int, str]]:
    """(lines, "path:line name") of every function and method, nested ones too."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    length = (node.end_lineno or node.lineno) - node.lineno + 1
                    found.append((length, f"{path.relative_to(root)}:{node.lineno} {node.name}"))
    return sorted(found, key=lambda item: (-item[0], item[1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=50, help="list the functions of this many lines or more")
    parser.add_argument("--top", type=int, help="list the N longest instead")
    args = parser.parse_args()
    lengths = function_lengths()
    shown = lengths[: args.top] if args.top else [item for item in lengths if item[0] >= args.limit]
    for length, where in shown:
        print(f"{length:4d}  {where}")
    return 1 if not args.top and shown else 0


if __name__ == "__main__":
    sys.exit(main())
