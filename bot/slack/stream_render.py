"""What Slack's streamed answer (chat.startStream / appendStream / stopStream) shows: the
council's stages as task cards, its title, the chairman's text, and the blocks under the answer."""

from __future__ import annotations

from typing import Any

from bot.progress import CouncilProgress, MemberState
from bot.render_text import clip, neutralize_slack, progress_lines, result_header, short_model
from bot.slack.feedback import feedback_block
from bot.slack.mrkdwn import plain
from bot.slack.render import (
    ANSWER_BLOCK,
    attached_note,
    context,
    deliberation_blocks,
    link_url,
    material_blocks,
    result_footer,
    stage_buttons,
    with_block_id,
)
from core.models import CouncilResult, CouncilStatus, MemberAnswer, counted
from core.models.voice import (
    WAITING_FOR_MEMORY,
    Author,
    Mark,
    Opening,
    author_of,
    member_failed,
    result_title,
    stages_of,
)

STREAM_CONTROL_NOTE = ":hourglass_flowing_sand: The council is at work; its progress is shown above."
STREAM_CONTROL_NOTE_BELOW = ":hourglass_flowing_sand: The council is at work; its progress is shown below."
TASK_FIELD_MAX = 256  # task details/output
TASK_TITLE_MAX = 150
Chunk = dict[str, Any]  # a chat.*Stream chunk: markdown_text, task_update, plan_update


def stream_text(text: str) -> str:
    """Model text for a `markdown_text` chunk: standard Markdown, left as written, pings broken.

    Each piece is neutralised on its own, so the caller cuts the text only at whitespace (no
    `<!channel>` or `@here` can be formed across two pieces)."""
    return neutralize_slack(text)


def _task(task_id: str, title: str, status: str, details: str | None = None, output: str | None = None) -> Chunk:
    chunk: Chunk = {
        "type": "task_update",
        "id": task_id,
        "title": clip(neutralize_slack(title), TASK_TITLE_MAX),
        "status": status,
    }
    if details:
        chunk["details"] = clip(neutralize_slack(details), TASK_FIELD_MAX)
    if output:
        chunk["output"] = clip(neutralize_slack(output), TASK_FIELD_MAX)
    return chunk


def stream_tasks(progress: CouncilProgress, result: CouncilResult | None = None) -> list[Chunk]:
    """The council as a short plan, a task per stage: the members' answers (each member's state
    in one line), auto mode's check, the reviews, the chairman. Statuses are Slack's: pending,
    in_progress, complete, error. With `result`, every task gets its final state (nothing is left
    pending or in progress)."""
    answers = {a.model: a for a in result.answers} if result is not None else {}
    members = list(progress.members.values())
    for model in answers:
        if model not in progress.members:
            members.append(MemberState(model))
    tasks = [_members_task(members, answers, progress, result)]
    agreement = _agreement_task(progress, result)
    if agreement is not None:
        tasks.append(agreement)
    if result is None or result.reviews or result.request.config.mode != "quick":
        tasks.append(_reviews_task(progress, members, result))
    tasks.append(_chairman_task(progress, result))
    return tasks


def _members_task(
    members: list[MemberState],
    answers: dict[str, MemberAnswer],
    progress: CouncilProgress,
    result: CouncilResult | None,
) -> Chunk:
    """Stage 1 as one task: `alpha 1.2 s · beta 2.0 s · gamma failed: timeout`."""
    states = [_member_state(member, answers.get(member.model), result) for member in members]
    answered = sum(1 for state, _ in states if state == "complete")
    done = all(state != "in_progress" for state, _ in states)
    title = f"{answered} of {counted(len(members), 'member')} answered" if done else "The members answer"
    output = " · ".join(line for _, line in states)
    if not done:
        status = "in_progress" if progress.stage >= 1 else "pending"
        return _task("members", title, status, details=output)
    return _task("members", title, "complete" if answered else "error", output=output)


def _member_state(member: MemberState, answer: MemberAnswer | None, result: CouncilResult | None) -> tuple[str, str]:
    """(its task status, its part of the line)."""
    name = short_model(member.model)
    if answer is not None:
        if answer.ok:
            return "complete", f"{name} {answer.latency_s:.1f} s" if answer.latency_s is not None else name
        return "error", member_failed(name, answer)
    if member.state == "answered":
        return "complete", f"{name} {member.latency_s:.1f} s" if member.latency_s is not None else name
    if member.state == "failed":
        return "error", f"{name} failed: {member.detail or 'no answer'}"
    if result is not None:
        return "error", f"{name} stopped"
    if member.state == "waiting":
        return "in_progress", f"{name} {WAITING_FOR_MEMORY}"
    return "in_progress", f"{name} …"


def _agreement_task(progress: CouncilProgress, result: CouncilResult | None) -> Chunk | None:
    """Auto mode: the check of the first two answers (None for other modes, or before it starts)."""
    check = result.agreement if result is not None else progress.agreement
    title = "Do the first two answers agree?"
    if check is not None:
        if check.escalated:
            return _task("agreement", title, "complete", output=f"No: {check.reason}; the whole council deliberates")
        return _task("agreement", title, "complete", output=f"Yes: {check.reason}")
    if progress.judging is not None:
        return _task("agreement", title, "in_progress", details=f"{short_model(progress.judging)} is comparing them")
    return None


def _reviews_task(progress: CouncilProgress, members: list[MemberState], result: CouncilResult | None) -> Chunk:
    title = "Anonymous peer review"
    if result is not None:
        if result.reviews:
            parsed = sum(1 for r in result.reviews if r.ballot_labels)
            return _task(
                "reviews",
                title,
                "complete",
                output=f"{counted(len(result.reviews), 'review')}, {counted(parsed, 'ballot')} read",
            )
        return _task("reviews", title, "error", output="skipped")
    expected = progress.reviews_expected or sum(1 for m in members if m.state == "answered")
    counts = f"{progress.reviews_done}/{counted(expected, 'review')}, {counted(progress.reviews_parsed, 'ballot')} read"
    if progress.stage >= 3:
        return _task("reviews", title, "complete", output=counts)
    if progress.stage == 2:
        return _task("reviews", title, "in_progress", details=counts)
    return _task("reviews", title, "pending")


def _chairman_task(progress: CouncilProgress, result: CouncilResult | None) -> Chunk:
    chairman = short_model(
        progress.chairman or (result.request.config.chairman if result is not None else "") or "chairman"
    )
    title = f"Chairman {chairman} writes the answer"
    if result is not None:
        synthesis = result.synthesis
        author = author_of(synthesis) if synthesis is not None else None
        if author is Author.CHAIRMAN:
            return _task("chairman", title, "complete", output="Done")
        if author is Author.AS_WRITTEN:
            return _task("chairman", title, "complete", output="Not needed: the first two answers were the same")
        if synthesis is not None:
            return _task("chairman", title, "error", output=f"{short_model(synthesis.model)} wrote the answer instead")
        stopped = "stopped" if result.status is CouncilStatus.CANCELLED else "no answer"
        return _task("chairman", title, "error", output=stopped)
    if progress.stage >= 3:
        writer = progress.chairman_model
        details = (
            f"{short_model(writer)} is writing"
            if writer and progress.chairman and writer != progress.chairman
            else None
        )
        return _task("chairman", title, "in_progress", details=details)
    return _task("chairman", title, "pending")


def stream_title(progress: CouncilProgress | None, result: CouncilResult | None = None) -> str:
    """The plan's title (a `plan_update` chunk)."""
    if result is not None:
        return clip(result_title(result), TASK_TITLE_MAX)
    if progress is None:
        return "Convening the council…"
    lines = progress_lines(progress)
    return clip(lines[0].replace(":hourglass: ", ""), TASK_TITLE_MAX) if lines else "The council is at work"


def opening_of_progress(progress: CouncilProgress | None) -> Opening:
    """What a running council's streamed text opens with (core's Opening, from Slack's progress)."""
    if progress is None:
        return Opening()
    failed = tuple((m.model, m.detail or "failed") for m in progress.members.values() if m.state == "failed")
    return Opening.live(progress.chairman, progress.chairman_model, failed, progress.agreement)


_MARKS = {Mark.WARN: "⚠️", Mark.ESCALATED: "↗️"}


def opening_text(opening: Opening) -> str | None:
    """The streamed text's first lines (None when nothing went wrong), then a blank line."""
    lines = [f"{_MARKS[mark]} {line}" for mark, line in opening.lines()]
    return neutralize_slack("\n".join(lines)) + "\n\n" if lines else None


def stream_final_blocks(
    result: CouncilResult, *, attached: bool = False, said_first: Opening | None = None, link: str | None = None
) -> list[dict[str, Any]]:
    """The blocks chat.stopStream puts under a streamed answer: notes, ranking, footer, buttons.
    `said_first`: what the streamed text opened with (not said again); `link`: the council's page.

    The first carries `council-a-<id>`, so thread history and buttons find the council."""
    blocks: list[dict[str, Any]] = []
    header = result_header(result) if said_first is None else _other_notices(result, said_first)
    if header:
        blocks.append(context(plain(header)))
    if attached and result.synthesis is not None:
        blocks.append(context(attached_note(result.synthesis.text)))
    blocks += material_blocks(result)
    blocks += deliberation_blocks(result)
    footer = result_footer(result)
    blocks.append(context(f"{footer} · <{link_url(link)}|open in the browser>" if link else footer))
    if stages_of(result):
        blocks.append(stage_buttons(result.council_id, result))
    if result.synthesis is not None:
        blocks.append(feedback_block(result.council_id))
    return with_block_id(blocks, f"{ANSWER_BLOCK}{result.council_id}-0")


def _other_notices(result: CouncilResult, said: Opening) -> str:
    """The result's notices but those the streamed text opened with."""
    others = said.unsaid(result)
    return ":information_source: " + " ".join(others) if others else ""
