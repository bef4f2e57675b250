"""`council ask` with seats and modes, as a real subprocess against the scripted server."""

from __future__ import annotations

import json

from tests.llm_server import Fail, Reply, WaitFor, council_member, ranking_review
from tests.test_cli import council


async def test_ask_json_shows_seats_and_their_attempts(tmp_path, llm):
    llm.script("broken", Fail(401, "invalid api key"))
    code, out, err = await council(
        tmp_path, llm, "ask", "--json", "--members", "broken|gamma,alpha,beta", "--chairman", "broken|beta", "Q?"
    )
    assert code == 0, err
    document = json.loads(out)
    first = document["stage1"][0]
    assert (first["seat"], first["model"]) == ("broken|gamma", "gamma")
    assert first["attempts"] == [{"model": "broken", "error": first["attempts"][0]["error"]}]
    assert first["attempts"][0]["error"].startswith("auth 401")
    assert [s["attempts"] for s in document["stage1"][1:]] == [[], []]
    assert document["stage3"]["model"] == "beta" and document["stage3"]["attempts"][0]["model"] == "broken"
    assert document["config"]["mode"] == "standard"
    assert any("answered by the fallback gamma (broken failed: auth 401" in n for n in document["metadata"]["notices"])
    assert "cli-test-key" not in out + err


async def test_ask_quick_mode_and_history(tmp_path, llm):
    code, out, err = await council(tmp_path, llm, "ask", "--json", "--mode", "quick", "Six times seven?")
    assert code == 0, err
    document = json.loads(out)
    assert document["config"]["mode"] == "quick" and len(document["stage1"]) == 2
    assert len(llm.requests) == 3  # two answers and the chairman's comparison
    code, out, _ = await council(tmp_path, llm, "history")
    assert code == 0 and "quick" in out
    code, out, err = await council(tmp_path, llm, "ask", "--mode", "quick", "Six times seven?")
    assert code == 0 and "A quick council: 2 of 2 members answered." in out, out + err  # as Slack says it


async def test_ask_prints_the_answer_then_waits_for_late_reviews(tmp_path, llm):
    # gamma reviews only once the chairman (beta) has been called: its ballot is late, and stored.
    order = lambda labels: sorted(labels, reverse=True)  # noqa: E731
    for name in ("alpha", "beta"):
        llm.script(name, council_member(f"{name} says 42.", order, synthesis=f"Final answer by {name}: 42."))
    late = council_member("gamma says 42.", order)
    late.stage2 = WaitFor(lambda call: call.model == "beta" and call.stage == 3, Reply(ranking_review(order)))
    llm.script("gamma", late)
    code, out, err = await council(tmp_path, llm, "ask", "--json", "Q?")
    assert code == 0, err
    document = json.loads(out)
    assert document["metadata"]["ballots_late"] >= 1
    assert any(s["model"] == "gamma" and s["parsed_ranking"] for s in document["stage2"])
    code, out, err = await council(tmp_path, llm, "ask", "Q again?")
    assert code == 0, err
    assert out.index("Final answer by beta: 42.") < out.index("Aggregate ranking")


async def test_leaderboard_shows_each_seats_models(tmp_path, llm):
    llm.script("broken", Fail(401, "invalid api key"))
    seats = {"COUNCIL_MODELS": "broken|gamma,alpha,beta"}
    code, _, err = await council(tmp_path, llm, "ask", "--json", "Q?", extra_env=seats)
    assert code == 0, err
    code, out, err = await council(tmp_path, llm, "leaderboard", "--rounds", "10", extra_env=seats)
    assert code == 0, err
    line = next(line for line in out.splitlines() if line.startswith("Seat broken|gamma:"))
    assert "broken - s, 100% failed of 1 → gamma" in line and "0% failed of 1" in line


async def test_ask_auto_mode_escalates_when_the_first_two_answers_differ(tmp_path, llm):
    # "alpha says: …" and "beta says: …" are short and differ: the whole council deliberates.
    code, out, err = await council(tmp_path, llm, "ask", "--json", "--mode", "auto", "Six times seven?")
    assert code == 0, err
    document = json.loads(out)
    assert document["config"]["mode"] == "auto" and document["metadata"]["escalated"] is True
    assert len(document["stage1"]) == 3 and len(document["stage2"]) == 3
    assert len(llm.requests) == 7  # 3 answers (the first two asked once), 3 reviews, 1 synthesis
    assert [len(llm.requests_for(m, stage=1)) for m in ("alpha", "beta", "gamma")] == [1, 1, 1]
    assert any("escalated: the first two answers disagreed" in n for n in document["metadata"]["notices"])


async def test_ask_auto_mode_stops_at_two_answers_that_agree(tmp_path, llm):
    for name in ("alpha", "beta"):
        llm.script(name, council_member("42."))
    code, out, err = await council(tmp_path, llm, "ask", "--json", "--mode", "auto", "Six times seven?")
    assert code == 0, err
    document = json.loads(out)
    assert document["metadata"]["escalated"] is False and document["stage3"]["response"] == "42."
    assert document["status"] == "ok" and len(llm.requests) == 2
    code, out, _ = await council(tmp_path, llm, "history")
    assert code == 0 and "auto" in out
    code, out, err = await council(tmp_path, llm, "ask", "Six times seven?", extra_env={"COUNCIL_MODE": "auto"})
    assert code == 0, err
    assert "the first two answers were the same" in out and len(llm.requests) == 4
