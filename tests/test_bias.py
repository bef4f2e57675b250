"""The reviewers' bias audit: statistics (core/records/bias.py), running totals on both backends
(core/storage/reviewer_totals.py), and the leaderboard views through the real service, CLI and
scripted reviewers (always in shown order, position-fair by construction)."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta

import pytest

from bot.render_text import bias_table, leaderboard_table
from core.models import CouncilStatus, Leaderboard
from core.records.bias import MIN_BALLOTS, audit, fisher_interval, wilson
from core.records.export import leaderboard_document
from core.service import CouncilService
from core.storage import Storage
from core.storage.reviewer_totals import ReviewerTotals, contribution
from tests.conftest import BACKENDS, MEMBERS, backend_url, make_settings
from tests.factories import make_result
from tests.llm_server import Alternating, council_member, in_shown_order
from tests.test_cli import council
from tests.test_service import ORIGIN


@pytest.fixture(params=BACKENDS)
def database_url(request, tmp_path) -> str:
    return backend_url(request, tmp_path)


# --------------------------------------------------------------------------- statistics


def test_wilson_interval_known_values():
    low, high = wilson(10, 10)
    assert (low, high) == pytest.approx((10 / (10 + 1.959963984540054**2), 1.0))
    low, high = wilson(5, 10)
    assert (low, high) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson(0, 0) is None


def test_fisher_interval_known_values():
    low, high = fisher_interval(0.5, 103)  # standard error 0.1 on the z scale
    assert low == pytest.approx(math.tanh(math.atanh(0.5) - 0.196), abs=1e-3)
    assert high == pytest.approx(math.tanh(math.atanh(0.5) + 0.196), abs=1e-3)
    assert fisher_interval(0.5, 3) is None


def test_flags_need_an_interval_excluding_the_fair_value_and_ten_ballots():
    def totals(n: int, hits: int) -> ReviewerTotals:
        return ReviewerTotals(ballots=n, first_hits=hits, expected_sum=n / 2)

    [nine] = audit({"r": totals(MIN_BALLOTS - 1, MIN_BALLOTS - 1)})
    assert nine.low > nine.expected and not nine.flagged  # excluded, but too few ballots
    [ten] = audit({"r": totals(MIN_BALLOTS, MIN_BALLOTS)})
    assert ten.flagged and ten.first_position_rate == 1.0 and ten.expected == 0.5
    [fair] = audit({"r": totals(40, 20)})
    assert not fair.flagged and fair.low < 0.5 < fair.high


def _length_totals(ballots: list[list[float]]) -> ReviewerTotals:
    """Totals of ballots given as the lengths of their answers in ranked order, best first."""
    expected = sum(1 / len(b) for b in ballots)
    t = ReviewerTotals(ballots=len(ballots), first_hits=round(expected), expected_sum=expected)  # position-fair
    for ballot in ballots:
        t.len_ballots += 1
        t.len_n += len(ballot)
        for p, x in enumerate(ballot):
            y = p / (len(ballot) - 1)
            t.len_sx, t.len_sy, t.len_sxx, t.len_syy, t.len_sxy = (
                t.len_sx + x,
                t.len_sy + y,
                t.len_sxx + x * x,
                t.len_syy + y * y,
                t.len_sxy + x * y,
            )
    return t


def test_length_correlation_from_the_sums():
    # Three answers per ballot, longer ranked higher: r = -1 over 3 x 12 pairs, flagged.
    [entry] = audit({"r": _length_totals([[100.0, 55.0, 10.0]] * 12)})
    assert entry.length.correlation == pytest.approx(-1.0) and entry.length.flagged
    assert entry.length.withheld is None and entry.length.low < entry.length.high < 0
    assert not entry.flagged


@pytest.mark.parametrize(
    ("ballots", "why"),
    [
        ([[100.0, 10.0]] * 2, "pairs"),  # the two councils: r=+1.00 [+1.00–+1.00] was shown
        ([[100.0, 10.0], [30.0, 60.0]] * 20, "pairs"),  # many ballots do not help: ±1 within each
        ([[100.0, 50.0, 10.0]] * (MIN_BALLOTS - 1), "few"),
        ([[40.0, 40.0, 40.0]] * 12, "equal"),
    ],
)
def test_a_correlation_the_sample_cannot_support_is_withheld_with_its_reason(ballots, why):
    [entry] = audit({"r": _length_totals(ballots)})
    check = entry.length
    assert check.withheld == why and check.correlation is None and check.low is None and check.high is None
    assert not check.flagged
    board = Leaderboard(rows=[], councils=1, ballots=len(ballots), scope="all", bias=[entry])
    table = bias_table(board)
    assert f"- ({why})" in table and "r=" not in table
    assert not [line for line in table.splitlines() if line != line.rstrip()]  # no trailing spaces


# --------------------------------------------------------------------------- storage


def counted(result):
    for review in result.reviews:
        review.format = "text"
    return result


async def test_totals_follow_saves_replacements_and_prunes(database_url):
    old = datetime.now(UTC) - timedelta(days=90)
    async with await Storage.open(database_url) as storage:
        legacy = make_result(council_id="legacy0000000001")  # no ballot format: stored before schema 8
        await storage.save_result(legacy)
        assert await storage.reviewer_totals() == {}
        first = counted(make_result(council_id="c000000000000001", created_at=old))
        second = counted(make_result(council_id="c000000000000002"))
        await storage.save_result(first)
        await storage.save_result(second)
        await storage.save_result(second)  # saving again replaces, never double counts
        stored = await storage.reviewer_totals()
        expected = contribution(first)
        for reviewer, part in contribution(second).items():
            expected[reviewer].add(part)
        assert stored.keys() == expected.keys()
        for reviewer, t in stored.items():
            assert t.ballots == expected[reviewer].ballots == 2
            assert t.first_hits == expected[reviewer].first_hits
            assert t.expected_sum == pytest.approx(expected[reviewer].expected_sum)
            assert t.len_sxy == pytest.approx(expected[reviewer].len_sxy)
        assert await storage.reviewer_totals(channel_id="elsewhere") == {}
        await storage.prune(datetime.now(UTC) - timedelta(days=30))
        assert {r: t.ballots for r, t in (await storage.reviewer_totals()).items()} == dict.fromkeys(expected, 1)
        await storage.prune(datetime.now(UTC) + timedelta(days=1))
        assert await storage.reviewer_totals() == {}


# --------------------------------------------------------------------------- end to end


def biased_llm(llm):
    """alpha ranks in the order it is shown; beta is position-fair by construction; gamma by label."""
    llm.script("alpha", council_member("alpha says: the answer is 42.", in_shown_order, synthesis=SYNTHESIS))
    llm.script("beta", council_member("beta says: the answer is 42..", Alternating(), synthesis=SYNTHESIS))
    llm.script("gamma", council_member("gamma says: the answer is 42.", synthesis=SYNTHESIS))


SYNTHESIS = "The council's final answer: 42, as every member computed it."


async def test_a_reviewer_ranking_in_shown_order_is_flagged_and_a_fair_one_is_not(llm, tmp_path, database_url):
    biased_llm(llm)
    settings = make_settings(
        llm, tmp_path, DATABASE_URL=database_url, RATE_LIMIT_USER_PER_HOUR=0, RATE_LIMIT_CHANNEL_PER_HOUR=0
    )
    service = await CouncilService.open(settings)
    try:
        for i in range(MIN_BALLOTS - 1):  # one at a time: each reviewer's calls come in order
            assert (await service.ask(f"q{i}?", ORIGIN)).status is CouncilStatus.OK
        early = {b.reviewer: b for b in (await service.leaderboard(None, "all", rounds=50)).bias}
        assert early["alpha"].first_position_rate == 1.0 and early["alpha"].ballots == MIN_BALLOTS - 1
        assert not early["alpha"].flagged  # never below 10 ballots
        for i in range(3):
            await service.ask(f"more {i}?", ORIGIN)
        board = await service.leaderboard(None, "all", rounds=50)
        bias = {b.reviewer: b for b in board.bias}
        assert set(bias) == set(MEMBERS)
        alpha, beta = bias["alpha"], bias["beta"]
        assert alpha.ballots == 12 and alpha.expected == 0.5 and alpha.flagged and alpha.low > 0.5
        assert beta.ballots == 12 and beta.first_position_rate == 0.5 and not beta.flagged
        assert alpha.self_preference is None  # COUNCIL_EXCLUDE_SELF: never shown its own answer
        scoped = await service.leaderboard(ORIGIN, "channel", rounds=50)
        assert {b.reviewer for b in scoped.bias} == set(MEMBERS)

        table = leaderboard_table(board)
        assert "Reviewer bias" in table and "position bias flagged: alpha" in table
        assert bias_table(board) in table
        document = leaderboard_document(board)
        assert [r["model"] for r in document["ratings"]] == [r.model for r in board.rows]
        entry = next(b for b in document["bias"] if b["reviewer"] == "alpha")
        assert entry["flagged"] is True and entry["ballots"] == 12
        assert set(entry) >= {"reviewer", "first_position_rate", "expected", "ballots", "low", "high", "flagged"}
    finally:
        await service.aclose()


async def test_self_preference_is_measured_when_reviewers_see_their_own_answer(llm, tmp_path):
    biased_llm(llm)
    settings = make_settings(llm, tmp_path, COUNCIL_EXCLUDE_SELF="false", RATE_LIMIT_USER_PER_HOUR=0)
    service = await CouncilService.open(settings)
    try:
        for i in range(4):
            await service.ask(f"q{i}?", ORIGIN)
        bias = {b.reviewer: b for b in (await service.leaderboard(None, "all", rounds=20)).bias}
        check = bias["gamma"].self_preference
        assert check is not None and check.ballots == 4 and check.expected == pytest.approx(1 / 3)
        assert check.rate == 0.0 and not check.flagged  # gamma (label C) ranks by label: A first
    finally:
        await service.aclose()


async def test_cli_leaderboard_bias_and_json(tmp_path, llm):
    biased_llm(llm)
    for _ in range(2):
        assert (await council(tmp_path, llm, "ask", "-q", "Q?"))[0] == 0
    code, out, err = await council(tmp_path, llm, "leaderboard", "--json", "--rounds", "20")
    assert code == 0, err
    document = json.loads(out)
    assert {r["model"] for r in document["ratings"]} == set(MEMBERS)
    alpha = next(b for b in document["bias"] if b["reviewer"] == "alpha")
    assert alpha["first_position_rate"] == 1.0 and alpha["ballots"] == 2 and alpha["flagged"] is False
    # Two ballots of two answers each (a reviewer does not rank its own): no correlation, and why.
    assert alpha["length"]["correlation"] is None and alpha["length"]["withheld"] == "pairs"
    code, out, err = await council(tmp_path, llm, "leaderboard", "--bias", "--rounds", "20")
    assert code == 0, err
    assert "Reviewer bias" in out and "alpha" in out and "Bradley-Terry" not in out
    assert "- (pairs)" in out and "r=" not in out and "+1.00" not in out
    assert not [line for line in out.splitlines() if line != line.rstrip()]
    code, out, err = await council(tmp_path, llm, "leaderboard", "--rounds", "20")
    assert code == 0 and "Bradley-Terry" in out and "Reviewer bias" in out
