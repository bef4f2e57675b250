"""What adapters show of an auto council while it runs, from the engine's real events (scripted
server over loopback): the judgement, the escalation, the seats asked after it."""

from __future__ import annotations

from bot.api.transcript import CouncilTranscript
from bot.progress import CouncilProgress
from bot.render_text import progress_lines
from bot.slack.stream_render import stream_tasks
from core.models import AgreementChecked, AgreementStarted, CouncilFinished, CouncilRequest
from tests import test_council
from tests.factories import run_council_to_end
from tests.test_auto_mode import LONG, with_answers
from tests.test_council import M1, config, script

server, router = test_council.server, test_council.router  # the fixtures


async def followed(router):
    """Every event, and after each one what the status message and Slack's task cards showed."""
    events, result = await run_council_to_end(router, CouncilRequest(question="q", config=config(mode="auto")))
    progress, snapshots = CouncilProgress(result.council_id), []
    for event in events:
        progress.apply(event)
        if not isinstance(event, CouncilFinished):
            snapshots.append((event, "\n".join(progress_lines(progress)), stream_tasks(progress)))
    return events, result, snapshots, progress


async def test_an_escalation_is_shown_as_it_happens(server, router):
    script(
        server,
        with_answers(LONG[M1], "Lyon is the capital of France, by a long way and for centuries.", "VERDICT: DISAGREE"),
    )
    events, result, snapshots, progress = await followed(router)
    judging = next(lines for event, lines, _ in snapshots if isinstance(event, AgreementStarted))
    assert "checks whether the first two answers agree" in judging
    event, lines, tasks = next(s for s in snapshots if isinstance(s[0], AgreementChecked))
    assert "↗️ Escalated: the first two answers disagreed; the whole council deliberates." in lines
    agreement = next(t for t in tasks if t["id"] == "agreement")
    assert agreement["status"] == "complete" and agreement["output"].startswith("No: the first two answers disagreed")
    # The other seats appear as they are asked, and every member is in stage 1's task at the end.
    members = next(t for t in stream_tasks(progress, result) if t["id"] == "members")
    assert members["title"] == "4 of 4 members answered" and members["output"].count(" · ") == 3
    transcript = CouncilTranscript()
    for event in events[:-1]:
        transcript.on_event(event)
    assert "**Escalated: the first two answers disagreed.** The whole council deliberates" in transcript.reasoning


async def test_answers_that_agree_end_without_the_review_and_say_why(server, router):
    script(server, with_answers("42", "42."))
    _, result, snapshots, progress = await followed(router)
    _, lines, _ = snapshots[-1]
    assert "🤝 The first two answers were the same." in lines
    tasks = {t["id"]: t for t in stream_tasks(progress, result)}
    assert tasks["agreement"]["output"] == "Yes: the first two answers were the same"
    assert tasks["chairman"]["output"] == "Not needed: the first two answers were the same"
    assert tasks["reviews"]["output"] == "skipped" and tasks["members"]["title"] == "2 of 2 members answered"
