"""`council eval --json` as a command: each configuration row says how many more tokens per question
than standard it spent when over the 10% slack (`tokens_over_standard`, the table's "tokens +N% over
standard"), and keeps every field of the documented shape."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.llm_server import ScriptedLLMServer
from tests.test_eval_run import cli_env, council, quiz_models

DOCUMENTED = {
    "name", "accuracy", "ci_low", "ci_high", "mean_calls", "tokens", "cost_usd", "latency_p50_s", "latency_p95_s",
    "p_value", "escalated",
}  # fmt: skip

# Skipped without importing it, as tests/test_eval_run.py is.
if importlib.util.find_spec("inspect_ai") is None:
    pytest.skip("inspect-ai is not installed (pip install -e '.[eval]')", allow_module_level=True)


async def test_eval_json_flags_the_rows_over_standard_s_tokens(tmp_path):
    async with ScriptedLLMServer(quiz_models()) as server:
        env = cli_env(server, tmp_path)
        code, out, err = await council(env, "--configs", "standard,refine,self-moa:beta", "--limit", "3", "--json")
        assert code == 0, err
        rows = {row["name"]: row for row in json.loads(out)["configs"]}
        code, table, err = await council(env, "--configs", "standard,refine,self-moa:beta", "--limit", "3")
        assert code == 0, err  # the table of the same configurations (the scripted members answer alike)
    assert list(rows) == ["standard", "refine", "self-moa:beta"]
    assert all(set(row) == DOCUMENTED | {"tokens_over_standard"} for row in rows.values())
    standard, refine = rows["standard"], rows["refine"]
    assert refine["tokens"] > 1.1 * standard["tokens"]  # one revision round reads every answer again
    assert refine["tokens_over_standard"] == round(refine["tokens"] / standard["tokens"] - 1, 4)
    assert standard["tokens_over_standard"] is None and rows["self-moa:beta"]["tokens_over_standard"] is None
    refine_line = next(line for line in table.splitlines() if line.startswith("refine"))
    assert refine_line.endswith(f"tokens +{refine['tokens_over_standard']:.0%} over standard")
