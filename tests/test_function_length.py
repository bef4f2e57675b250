"""Functions stay short enough to read at once: none in core/ or bot/ reaches 50 lines, def to last
line (scripts/long_functions.py lists the longest)."""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("long_functions", ROOT / "scripts" / "long_functions.py")
assert _spec and _spec.loader
long_functions = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = long_functions
_spec.loader.exec_module(long_functions)

LIMIT = 50


def test_no_function_in_core_or_bot_reaches_fifty_lines():
    lengths = long_functions.function_lengths()
    assert len(lengths) > 1000, "the walk found no functions"
    assert [f"{where}: {length} lines" for length, where in lengths if length >= LIMIT] == []


def test_the_count_runs_from_def_to_the_last_line(tmp_path):
    (tmp_path / "core").mkdir()
    (tmp_path / "bot").mkdir()
    (tmp_path / "core" / "m.py").write_text("def f():\n    x = 1\n\n    return x\n\n\nasync def g():\n    pass\n")
    assert long_functions.function_lengths(tmp_path) == [(4, "core/m.py:1 f"), (2, "core/m.py:7 g")]
