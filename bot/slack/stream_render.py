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
    material_blocks,
    ranking_context,
    result_footer,
    stage_buttons,
    took_text,
    with_block_id,
)
from core.models import CouncilResult, CouncilStatus, MemberAnswer, counted
from core.models.voice import WAITING_FOR_MEMORY, Author, author_of, result_composition_line, stages_of

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
    """The council as a plan: one task per member (stage 1), one for the reviews, one for the
    chairman. Statuses are Slack's: pending, in_progress, complete, error. With `result`, every
    task gets its final state (nothing is left pending or in progress)."""
    answers = {a.model: a for a in result.answers} if result is not None else {}
    members = list(progress.members.values())
    for model in answers:
        if model not in progress.members:
            members.append(MemberState(model))
    tasks = [
        _member_task(f"member-{index + 1}", member, answers.get(member.model), progress, result)
        for index, member in enumerate(members)
    ]
    agreement = _agreement_task(progress, result)
    if agreement is not None:
        tasks.append(agreement)
    tasks.append(_reviews_task(progress, members, result))
    tasks.append(_chairman_task(progress, result))
    return tasks


def _member_task(
    task_id: str,
    member: MemberState,
    answer: MemberAnswer | None,
    progress: CouncilProgress,
    result: CouncilResult | None,
) -> Chunk:
    """A member's task: its stored answer when the council is over, else its live state."""
    title = short_model(member.model)
    if answer is not None:
        if answer.ok:
            took = f"Answered in {answer.latency_s:.1f} s" if answer.latency_s is not None else "Answered"
            return _task(task_id, title, "complete", output=took)
        return _task(task_id, title, "error", output=answer.error.short() if answer.error else "no answer")
    if member.state == "answered":
        took = f"Answered in {member.latency_s:.1f} s" if member.latency_s is not None else "Answered"
        return _task(task_id, title, "complete", output=took)
    if member.state == "failed":
        return _task(task_id, title, "error", output=member.detail or "failed")
    if result is not None:
        return _task(task_id, title, "error", output="stopped")
    if member.state == "waiting":
        return _task(task_id, title, "pending", details=WAITING_FOR_MEMORY)
    return _task(task_id, title, "in_progress" if progress.stage >= 1 else "pending")


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
        took = took_text(result)
        if result.status is CouncilStatus.FAILED:
            return f"The council failed{took}"
        if result.status is CouncilStatus.CANCELLED:
            return f"The council was stopped{took}"
        return f"The council answered{took}"
    if progress is None:
        return "Convening the council…"
    lines = progress_lines(progress)
    return clip(lines[0].replace(":hourglass: ", ""), TASK_TITLE_MAX) if lines else "The council is at work"


def stream_final_blocks(result: CouncilResult, *, attached: bool = False) -> list[dict[str, Any]]:
    """The blocks chat.stopStream puts under a streamed answer: notes, ranking, footer, buttons.

    The first carries `council-a-<id>`, so thread history and buttons find the council."""
    blocks: list[dict[str, Any]] = []
    header = result_header(result)
    if header:
        blocks.append(context(plain(header)))
    if attached and result.synthesis is not None:
        blocks.append(context(attached_note(result.synthesis.text)))
    blocks += material_blocks(result)
    if result.aggregate is not None:
        blocks.append(context(plain(ranking_context(result))))
    if (meter := result_composition_line(result)) is not None:
        blocks.append(context(plain(meter)))
    blocks += deliberation_blocks(result)
    blocks.append(context(result_footer(result)))
    if stages_of(result):
        blocks.append(stage_buttons(result.council_id, result))
    if result.synthesis is not None:
        blocks.append(feedback_block(result.council_id))
    return with_block_id(blocks, f"{ANSWER_BLOCK}{result.council_id}-0")
