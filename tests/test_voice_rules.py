"""Rules of the presentation module that several surfaces share: a member the user skipped is not
called failed, a running stage's title says what a quick or escalated council does on every
surface that shows it, and a streamed answer's opening names what went wrong."""

from __future__ import annotations

from bot.cli_commands.output import Terminal, print_event
from bot.progress import CouncilProgress
from bot.render_text import progress_lines
from bot.slack.stream_render import opening_text
from core.models import AgreementChecked, ErrorInfo, ErrorKind, StageStarted
from core.models.stages import AgreementCheck
from core.models.voice import Opening, failed_members, result_title, stage_title, summary_line
from tests.factories import make_result


def _skipped(result):
    """`m-down` skipped with "synthesize now" instead of failing."""
    down = next(a for a in result.answers if a.model == "m-down")
    down.error = ErrorInfo(kind=ErrorKind.CANCELLED, message="skipped: you asked to synthesize now")
    return result


def test_a_member_the_user_skipped_is_not_called_failed():
    failed = make_result()
    assert "m-down failed" in summary_line(failed) and failed_members(failed)
    skipped = _skipped(make_result())
    skipped.synthesis.by_chairman = True  # no stand-in: only the skipped member could be told
    assert "m-down" not in summary_line(skipped) and "m-down" not in result_title(skipped)
    assert failed_members(skipped) == [] and Opening.of_result(skipped).failed == ()


def test_the_running_stage_title_says_what_a_quick_or_escalated_council_does():
    quick = CouncilProgress("c1", stage=3, mode="quick")
    assert progress_lines(quick)[0] == stage_title(3, mode="quick") == "Stage 3 · the chairman compares the two answers"
    auto = CouncilProgress("c2", stage=1, mode="auto")
    assert progress_lines(auto)[0] == "Stage 1 · members answer"
    auto.agreement = AgreementCheck(escalated=True, reason="the first two answers disagreed")
    assert progress_lines(auto)[0] == "Stage 1 · the other members answer"
    assert progress_lines(CouncilProgress("c3", stage=3))[0] == "Stage 3 · chairman synthesis"


def test_the_terminal_titles_an_escalated_stage_as_the_api_does(capsys):
    term = Terminal(quiet=False)
    term.mode = "auto"
    check = AgreementCheck(escalated=True, reason="the first two answers disagreed")
    for event in (
        StageStarted(council_id="c", stage=1),
        AgreementChecked(council_id="c", check=check),
        StageStarted(council_id="c", stage=1),
    ):
        print_event(term, event)
    err = capsys.readouterr().err
    assert err.count("▶ Stage 1 · members answer") == 1 and "▶ Stage 1 · the other members answer" in err
    assert "Escalated: the first two answers disagreed; the whole council deliberates." in err


def test_a_streamed_opening_names_the_stand_in_the_failed_member_and_the_escalation():
    opening = Opening(
        chairman="openrouter:org/chair",
        stand_in="openrouter:org/beta",
        failed=(("local:gamma", "timeout"),),
        escalation="the first two answers disagreed",
    )
    assert opening_text(opening) == (
        "⚠️ The chairman chair failed; beta wrote this answer instead.\n"
        "⚠️ gamma gave no answer: timeout\n"
        "↗️ Escalated: the first two answers disagreed; the whole council deliberated.\n\n"
    )
    assert opening_text(Opening()) is None
    live = Opening.live("chair", "beta", (), None)
    assert live.stand_in == "beta" and Opening.live("chair", "chair", (), None).stand_in is None
