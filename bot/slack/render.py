"""Slack rendering: Block Kit for the question, the status message, the result and command replies
(the streamed display: stream_render.py; the stage modals: modals.py; text as mrkdwn: mrkdwn.py).

Limits respected here (Slack rejects the whole call otherwise): 50 blocks per message, 100 per
modal, 3000 characters per section text, 24 characters per modal title, 2000 per button value.
Long text is split into several sections; a long answer (bot/long_answer.py) shows its whole
blocks up to the limit, the note says it is cut, and the caller attaches the full text as a file.

Everything a model (or a user) wrote passes through `mrkdwn()`/`plain()` (mrkdwn.py), so no text
can ping `@channel` or a user.
Our own messages tag their first block's `block_id` with the council (`council-q-`, `council-s-`,
`council-a-`; block ids must be unique per message). Thread history does not read them back: which
message belongs to which council is the message map's (bot/history.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from bot.councils import RESUMED_TEXT, is_long
from bot.long_answer import cut_answer, split_text
from bot.progress import CouncilProgress
from bot.render_text import (
    clip,
    history_lines,
    leaderboard_table,
    progress_lines,
    result_header,
    short_model,
)
from bot.slack.feedback import feedback_block
from bot.slack.mrkdwn import escape_code, fallback, mrkdwn, plain
from core.models import (
    AuditEntry,
    ChannelSettings,
    CouncilConfig,
    CouncilResult,
    CouncilStatus,
    CouncilSummary,
    Leaderboard,
)
from core.models.doubt import split_mention
from core.models.voice import (
    MODE_DESCRIPTIONS,
    STAGE_BUTTONS,
    Tone,
    cut_note,
    deliberation_lines,
    file_summary,
    footer_fields,
    lens_line,
    measured,
    quote,
    stages_of,
    stream_tail,
    summary_line,
)
from core.models.voice import final_status as status_words

if TYPE_CHECKING:
    from bot.surface import StatusView

MESSAGE_BLOCKS = 50
SECTION_MAX = 3000
SECTION_CHUNK = 2900  # what we put in one section: room for a closing fence and an ellipsis
CONTEXT_MAX = 2000
# A modal shows at most this much model text in total (then says where the rest is).
RESUMED_NOTE = f":arrows_counterclockwise: {RESUMED_TEXT}"
STREAM_TAIL_CHARS = 1500  # of the chairman's text, shown in the status message while it writes

QUESTION_BLOCK = "council-q-"
STATUS_BLOCK = "council-s-"
ANSWER_BLOCK = "council-a-"

ACTION_STOP = "council_stop"
ACTION_SYNTHESIZE = "council_synthesize"
ACTION_STAGE_PREFIX = "council_stage_"
Stage = Literal["answers", "reviews", "ranking", "differ"]
STAGES: tuple[Stage, ...] = ("answers", "reviews", "ranking", "differ")

Message = dict[str, Any]  # {"text": ..., "blocks": [...]}, ready for chat.postMessage/chat.update


# --------------------------------------------------------------------------- blocks


def section(text: str, block_id: str | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "section", "text": {"type": "mrkdwn", "text": clip(text or " ", SECTION_MAX)}}
    if block_id:
        block["block_id"] = block_id
    return block


def sections(text: str, limit: int = SECTION_CHUNK) -> list[dict[str, Any]]:
    """Already-rendered mrkdwn split into as many sections as it needs."""
    return [section(chunk) for chunk in split_text(text, limit)] if text.strip() else []


def context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": clip(text, CONTEXT_MAX)}]}


def button(
    text: str, action_id: str, value: str, style: str | None = None, confirm: dict | None = None
) -> dict[str, Any]:
    element: dict[str, Any] = {
        "type": "button",
        "text": {"type": "plain_text", "text": text, "emoji": True},
        "action_id": action_id,
        "value": value,
    }
    if style:
        element["style"] = style
    if confirm:
        element["confirm"] = confirm
    return element


def with_block_id(blocks: list[dict[str, Any]], block_id: str) -> list[dict[str, Any]]:
    """Tag the first block with our id (Slack block ids are unique per message)."""
    if blocks:
        blocks[0] = {**blocks[0], "block_id": block_id}
    return blocks


def limit_blocks(blocks: list[dict[str, Any]], limit: int, note: str) -> list[dict[str, Any]]:
    if len(blocks) <= limit:
        return blocks
    return [*blocks[: limit - 1], context(note)]


# --------------------------------------------------------------------------- question and status


def question_message(question: str, user_id: str, council_id: str) -> Message:
    """The channel message a `/council` question becomes; the council runs in its thread."""
    body = plain(question)
    chunks = split_text(body, SECTION_CHUNK - 100)
    blocks = [section(f"<@{user_id}> asked the council:\n{quote(chunks[0])}")]
    blocks += [section(quote(chunk)) for chunk in chunks[1:]]
    blocks = limit_blocks(blocks, MESSAGE_BLOCKS - 1, "The question is cut here.")
    return {
        "text": fallback(plain(f"Council question: {question}")),
        "blocks": with_block_id(blocks, QUESTION_BLOCK + council_id),
    }


def status_message(
    council_id: str,
    progress: CouncilProgress | None,
    *,
    running: bool = True,
    final: str | None = None,
    note: str | None = None,
) -> Message:
    """The one status message of a council, edited as it progresses (with `note`, a fixed line:
    the small control message next to a streamed council)."""
    if final is not None:
        lines = [final]
    elif note is not None:
        lines = [note]
    elif progress is None:
        lines = [":hourglass_flowing_sand: Convening the council…"]
    else:
        lines = progress_lines(progress)
    blocks = [section(plain("\n".join(lines)))]
    if final is None and progress is not None and progress.stage >= 3 and progress.chairman_text:
        tail = stream_tail(progress.chairman_text, STREAM_TAIL_CHARS)
        blocks.append(section(clip(mrkdwn(tail), SECTION_MAX)))
    blocks.append(context(f"Council `{council_id}`"))
    if running:
        blocks.append(
            {
                "type": "actions",
                "elements": [
                    button("Stop", ACTION_STOP, council_id, style="danger"),
                    button("Synthesize now", ACTION_SYNTHESIZE, council_id),
                ],
            }
        )
    text = lines[0] if lines else "Council"
    return {"text": fallback(f"Council: {text}"), "blocks": with_block_id(blocks, STATUS_BLOCK + council_id)}


def status_view(view: StatusView) -> Message:
    """The status message the runner (bot/following.py) asks for."""
    return status_message(
        view.request.council_id, view.progress, running=view.running, final=view.final, note=view.note
    )


def resumed_note() -> dict[str, Any]:
    return {"text": RESUMED_NOTE}


def mention(target: str) -> str:
    """A channel's `kind:id` (core/models/doubt.py) as Slack writes the mention."""
    kind, ident = split_mention(target)
    return f"<!subteam^{ident}>" if kind == "group" else f"<@{ident}>"


def unsure_mention_set(target: str | None) -> str:
    return f"An unsure answer here mentions {mention(target)}." if target else "An unsure answer here mentions nobody."


def unsure_mention(result: CouncilResult, target: str) -> dict[str, Any] | None:
    """The thread message that calls the channel's person or group to an unsure answer (None when
    the target is not Slack's)."""
    unsure = result.unsure
    if unsure is None or split_mention(target)[0] not in ("group", "user"):
        return None
    text = f"{mention(target)} {plain(measured.unsure_line(unsure))}"
    return {"text": text, "blocks": [section(text)]}


def not_posted(council_id: str) -> str:
    return f":warning: The answer could not be posted here; get it with `/council export {council_id}`."


STATUS_MARKS = {
    Tone.OK: ":white_check_mark:",
    Tone.WARN: ":warning:",
    Tone.FAILED: ":x:",
    Tone.STOPPED: ":octagonal_sign:",
}
WHERE_IT_IS = {Tone.OK: " The answer is below.", Tone.WARN: " The answer is below.", Tone.FAILED: " Details below."}


def final_status(result: CouncilResult) -> str:
    tone, words = status_words(result)
    return f"{STATUS_MARKS[tone]} {words}.{WHERE_IT_IS.get(tone, '')}"


# --------------------------------------------------------------------------- result


def link_url(url: str) -> str:
    return url.replace("|", "%7C").replace(">", "%3E").replace("<", "%3C")


def material_blocks(result: CouncilResult) -> list[dict[str, Any]]:
    """Under the answer: the web sources as numbered links (what the chairman's [n] point to), and
    the files the council read."""
    request = result.request
    blocks = []
    if request.sources:
        links = [
            f"<{link_url(source.url)}|[{i}] {escape_code(clip(source.title, 80)).replace('|', '¦')}>"
            for i, source in enumerate(request.sources, 1)
        ]
        blocks.append(context(":mag: Sources: " + " · ".join(links)))
    if request.attachments:
        names = ", ".join(escape_code(file_summary(a)) for a in request.attachments)
        blocks.append(context(f":paperclip: Read: {names}"))
    return blocks


def deliberation_blocks(result: CouncilResult) -> list[dict[str, Any]]:
    """Self-MoA's samples, each member's lens and the rounds (one context block; none without them)."""
    lines = deliberation_lines(result)
    return [context(clip(plain("\n".join(lines)), SECTION_CHUNK))] if lines else []


def stage_buttons(council_id: str, result: CouncilResult) -> dict[str, Any]:
    elements = [button(STAGE_BUTTONS[s], ACTION_STAGE_PREFIX + s, council_id) for s in stages_of(result)]
    return {"type": "actions", "block_id": f"council-stages-{council_id}", "elements": elements}


def result_footer(result: CouncilResult) -> str:
    """The one plain line under an answer (who answered, what failed, who the reviewers put
    first), then the council's id, mode, who wrote it, time and cost; the figures are behind the
    stage buttons."""
    name = short_model(result.synthesis.model) if result.synthesis is not None else None
    _council, *fields = footer_fields(result, name, brief=True)
    return plain(" · ".join([summary_line(result), f"Council `{result.council_id}`", *fields]))


def attached_note(answer: str) -> str:
    return f":page_facing_up: {cut_note(answer)}"


def result_messages(result: CouncilResult, link: str | None = None) -> list[Message]:
    """The answer as thread replies: header (when degraded) first, the answer, the ranking, buttons.

    Normally one message. A long answer (bot/long_answer.py) shows its start and says the
    full text is attached (the caller uploads it: `bot.councils.answer_file`). Each message stays within 50
    blocks and every section within 3000 characters.
    """
    cid = result.council_id
    header = result_header(result)
    tail_blocks = _answer_tail(result, link)
    messages = _paginate(_answer_head(result, header), _answer_body(result), tail_blocks)
    answer_text = result.synthesis.text if result.synthesis else "The council has no answer."
    first_text = f"{header} {answer_text}" if header else answer_text
    out = []
    for index, blocks in enumerate(messages):
        with_block_id(blocks, f"{ANSWER_BLOCK}{cid}-{index}")
        text = fallback(plain(first_text)) if index == 0 else "(continued)"
        out.append({"text": text, "blocks": blocks})
    return out


def _answer_head(result: CouncilResult, header: str) -> list[dict[str, Any]]:
    """The header of a degraded council, and for a failed one why each member failed."""
    head_blocks = sections(plain(header)) if header else []
    if result.status is CouncilStatus.FAILED:
        failures = [f"• {short_model(a.model)}: {a.error.short()}" for a in result.answers if a.error is not None]
        if failures:
            head_blocks += sections(plain("\n".join(failures)))
    return head_blocks


def _answer_body(result: CouncilResult) -> list[dict[str, Any]]:
    """The answer, or the start of a long one with a note that the whole text is attached."""
    if result.synthesis is None:
        return []
    text = result.synthesis.text
    if not is_long(result):
        return sections(mrkdwn(text))
    body_blocks = sections(mrkdwn(cut_answer(text)))
    body_blocks.append(context(attached_note(text)))
    return body_blocks


def _answer_tail(result: CouncilResult, link: str | None = None) -> list[dict[str, Any]]:
    """What the council read, the ranking, the footer (with the link to the council's page in the
    browser app, when there is one), the stage buttons and the feedback buttons."""
    cid = result.council_id
    tail_blocks: list[dict[str, Any]] = material_blocks(result)
    tail_blocks += deliberation_blocks(result)
    footer = result_footer(result)
    tail_blocks.append(context(f"{footer} · <{link_url(link)}|open in the browser>" if link else footer))
    if stages_of(result):
        tail_blocks.append(stage_buttons(cid, result))
    if result.synthesis is not None:
        tail_blocks.append(feedback_block(cid))  # 👍 / 👎 under the final answer (bot/slack/feedback.py)
    return tail_blocks


def _paginate(
    head_blocks: list[dict[str, Any]], body_blocks: list[dict[str, Any]], tail_blocks: list[dict[str, Any]]
) -> list[list[dict[str, Any]]]:
    """Head, body and tail in as few messages as `MESSAGE_BLOCKS` allows; the tail stays whole, last."""
    messages: list[list[dict[str, Any]]] = []
    current = head_blocks
    for block in body_blocks:
        if len(current) >= MESSAGE_BLOCKS - len(tail_blocks):
            messages.append(current)
            current = []
        current.append(block)
    if len(current) + len(tail_blocks) > MESSAGE_BLOCKS:
        messages.append(current)
        current = []
    current += tail_blocks
    messages.append(current)
    return messages


# --------------------------------------------------------------------------- commands


HELP = "\n".join(
    (
        "*LLM Council* — several models answer your question, review each other anonymously, "
        "and a chairman writes the final answer.",
        "",
        "• `/council <question>` — convene a council; it answers in a thread.",
        "• {name} `<question>` (a mention) — the same from a message; inside a thread the earlier messages are "
        "context for a follow-up. DMs work too.",
        "• While it runs: *Stop*, or *Synthesize now* with the answers that have arrived.",
        "• Under the answer: *Answers*, *Reviews* (with each extracted ballot) and *Ranking* open each stage.",
        "• `/council history [channel|workspace|mine] [N]` · `/council leaderboard [channel|workspace|all]` · "
        "`/council export <id> [json]`",
        "• Attach files (PDF, Word, text, CSV, code, images) to the message that asks: the council reads them. "
        "Start the question with `search:` to search the web first.",
        f"• Start it with `quick:` for a quick council: {MODE_DESCRIPTIONS['quick']}; "
        f"with `auto:`, {MODE_DESCRIPTIONS['auto']} (`standard:` for the full three stages).",
        "• `members: a, b; chairman: c` before a question picks its council among the models this channel "
        "allows; `/council pick` opens a form with them.",
        "• `/council-admin show|members a,b|c|chairman X|allow a,b|limits user=N channel=N budget=USD|search on|off|"
        "mode quick|auto|standard|reset|audit` "
        "(also `/council admin …`) — this channel's council (workspace admins and owners).",
    )
)


def help_text(bot_name: str = "@council") -> str:
    return HELP.replace("{name}", bot_name)


def text_blocks(title: str, rendered: str) -> list[dict[str, Any]]:
    blocks = [section(f"*{title}*"), *sections(rendered)]
    return limit_blocks(blocks, MESSAGE_BLOCKS, "…cut here.")


def history_message(summaries: list[CouncilSummary], scope: str) -> Message:
    rendered = plain("\n".join(history_lines(summaries)))
    return {"text": fallback(f"Councils ({scope})"), "blocks": text_blocks(f"Councils ({scope})", rendered)}


def leaderboard_message(board: Leaderboard) -> Message:
    rendered = plain(leaderboard_table(board))
    return {
        "text": fallback(f"Council leaderboard ({board.scope})"),
        "blocks": text_blocks(f"Council leaderboard ({board.scope})", rendered),
    }


def config_message(title: str, config: CouncilConfig, channel: ChannelSettings | None = None) -> Message:
    lines = [f"*Members:* {', '.join(config.members)}", f"*Chairman:* {config.chairman}", f"*Mode:* {config.mode}"]
    lines += [f"*{seat}:* {lens}" for seat in config.members if (lens := lens_line(config.lens(seat)))]
    if channel is not None:

        def show(value: Any, unit: str = "") -> str:
            return "default" if value is None else f"{value}{unit}"

        budget = f"${channel.daily_budget_usd:.2f}" if channel.daily_budget_usd is not None else None
        lines.append(
            f"*Limits:* per user {show(channel.user_limit_per_hour, '/h')} · per channel "
            f"{show(channel.channel_limit_per_hour, '/h')} · daily budget {show(budget)}"
        )
        search = {None: "default", True: "on", False: "off"}[channel.search]
        lines.append(f"*Web search:* {search}")
        overridden = [name for name in ("members", "chairman") if getattr(channel, name)]
        lines.append(f"_Overrides in this channel: {', '.join(overridden) or 'none'}_")
    rendered = plain("\n".join(lines))
    return {"text": fallback(title), "blocks": text_blocks(title, rendered)}


def audit_message(entries: Iterable[AuditEntry]) -> Message:
    lines = []
    for entry in entries:
        detail = ", ".join(f"{k}={v}" for k, v in (entry.detail or {}).items())
        lines.append(
            plain(f"{entry.at:%Y-%m-%d %H:%M} · {entry.action} {detail}".strip()) + f" · by <@{entry.actor_id}>"
        )
    rendered = "\n".join(lines) or "No admin changes in this channel yet."
    return {"text": "Admin audit log", "blocks": text_blocks("Admin audit log", rendered)}
