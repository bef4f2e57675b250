"""The stage details a button opens (a modal per stage: answers, reviews, ranking, where they differ), within
Slack's 100 blocks and a total text budget, shared fairly between the members."""

from __future__ import annotations

from typing import Any

from bot.long_answer import split_text
from bot.render_text import aggregate_table, ballot_line, clip, ranking_line, short_model
from bot.slack.mrkdwn import mrkdwn, plain
from bot.slack.render import (
    SECTION_CHUNK,
    Stage,
    context,
    limit_blocks,
    material_blocks,
    section,
    sections,
)
from core.models import CouncilResult
from core.models.voice import (
    STAGE_VIEWS,
    answer_name,
    answer_state,
    answer_took,
    ballots_read,
    differ_parts,
    differ_source,
    late_line,
    lens_line,
    result_composition_line,
    review_title,
    revised_name,
)

MODAL_BLOCKS = 100
MODAL_TITLE_MAX = 24
MODAL_TEXT_BUDGET = 60000


def _allot(needs: list[int], total: int) -> list[int]:
    """Share `total` among requests: small needs are met in full, the rest split evenly."""
    allotted = [0] * len(needs)
    left, pending = total, sorted(range(len(needs)), key=lambda i: needs[i])
    while pending:
        i = pending.pop(0)
        allotted[i] = min(needs[i], max(1, left // (len(pending) + 1)))
        left -= allotted[i]
    return allotted


def _budgeted(parts: list[tuple[list[dict[str, Any]], str]], slots: int, note: str) -> list[dict[str, Any]]:
    """(header blocks, body mrkdwn) pairs within `slots` blocks and `MODAL_TEXT_BUDGET` characters."""
    fixed = sum(len(head) for head, _ in parts)
    chunked = [split_text(body, SECTION_CHUNK) if body.strip() else [] for _, body in parts]
    room = max(len(parts), min(slots - fixed - 1, MODAL_TEXT_BUDGET // SECTION_CHUNK))
    allotted = _allot([len(c) for c in chunked], room)
    blocks: list[dict[str, Any]] = []
    cut = False
    for (head, _), chunks, keep in zip(parts, chunked, allotted):
        blocks += head
        if len(chunks) > keep:
            chunks = chunks[:keep]
            chunks[-1] = clip(chunks[-1], SECTION_CHUNK - 4) + " …"
            cut = True
        blocks += [section(c) for c in chunks]
    if cut:
        blocks.append(context(note))
    return blocks


def stage_modal(result: CouncilResult, stage: Stage) -> dict[str, Any]:
    """A modal view showing one stage of a stored council (at most 100 blocks)."""
    cid = result.council_id
    note = plain(f"Long texts are cut here; the whole council: `/council export {cid}`")
    intro = [context(plain(f"Council {cid}: {clip(' '.join(result.request.question.split()), 500)}"))]
    intro += material_blocks(result)  # what the council read, at every stage
    if stage == "answers":
        body = _answers_stage(result, MODAL_BLOCKS - len(intro) - 2, note)
    elif stage == "reviews":
        mapping = ", ".join(f"{label} = {short_model(model)}" for label, model in sorted(result.label_to_model.items()))
        intro += [context(plain(f"Labels: {mapping}" if mapping else "No labels."))]
        body = _reviews_stage(result, MODAL_BLOCKS - len(intro) - 2, note)
    elif stage == "differ":
        body = _differ_stage(result)
    else:
        body = _ranking_stage(result)
    blocks = limit_blocks(intro + body, MODAL_BLOCKS, note)
    return {
        "type": "modal",
        "callback_id": f"council_stage_view_{stage}",
        "title": {"type": "plain_text", "text": clip(STAGE_VIEWS[stage], MODAL_TITLE_MAX)},
        "close": {"type": "plain_text", "text": "Close"},
        "blocks": blocks,
    }


def _answers_stage(result: CouncilResult, slots: int, note: str) -> list[dict[str, Any]]:
    parts = []
    for answer in result.answers:
        lens = lens_line(result.request.config.lens(answer.seat or answer.model))
        head_lens = [context(plain(lens))] if lens else []
        if answer.ok:
            head = [section(plain(f"*{answer_name(answer)}*{answer_state(result)}{answer_took(answer)}")), *head_lens]
            parts.append((head, mrkdwn(answer.text)))
            final = result.final_text(answer)
            if final and final != answer.text:
                revised = [section(plain(f"*{revised_name(answer)}*"))]
                parts.append((revised, mrkdwn(final)))
        else:
            why = answer.error.short() if answer.error else "no answer"
            parts.append(([section(plain(f":x: *{answer.model}*: {why}"))], ""))
    return _budgeted(parts, slots, note) if parts else [section("No answers.")]


def _reviews_stage(result: CouncilResult, slots: int, note: str) -> list[dict[str, Any]]:
    parts = []
    for review in result.reviews:
        head = [section(plain(f"*{review_title(review)}*")), context(plain(ballot_line(review)))]
        parts.append((head, mrkdwn(review.text) if review.text else ""))
    return _budgeted(parts, slots, note) if parts else [section("No reviews.")]


def ranking_context(result: CouncilResult) -> str:
    """The ranking the chairman was given, how many ballots it was read from, and the reviews that
    came later."""
    lines = [ranking_line(result.aggregate), ballots_read(result), late_line(result)]
    return "\n".join(line for line in lines if line)


def _ranking_stage(result: CouncilResult) -> list[dict[str, Any]]:
    body = sections(plain(aggregate_table(result.aggregate)))
    if result.aggregate is not None:
        body.append(context(plain(ranking_context(result))))
        if (meter := result_composition_line(result)) is not None:  # behind the button, not under the answer
            body.append(context(plain(meter)))
        body.append(
            context(
                "mean = average position over the ballots that ranked it (lower is better); votes = ballots; "
                "Borda and Copeland are tie-breakers; Kendall's W = agreement between reviewers (0–1)."
            )
        )
    return body


def _differ_stage(result: CouncilResult) -> list[dict[str, Any]]:
    """Where the members stand: a section per part (its items as bullets), then who wrote it."""
    body: list[dict[str, Any]] = []
    for heading, items in differ_parts(result.disagreement):
        body += sections(f"*{plain(heading)}*\n" + "\n".join(f"• {plain(item)}" for item in items))
    if not body:
        return [section("The council's answers were not compared.")]
    if (source := differ_source(result)) is not None:
        body.append(context(plain(source)))
    return body
