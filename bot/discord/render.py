"""Discord rendering: status text, result embeds, stage details and the persistent buttons.

Everything a model wrote goes through `neutralize_discord` here, and every message built from
it is sent with `AllowedMentions.none()` (interactions.NO_MENTIONS). Discord limits respected: content
2000, embed description 4096, field value 1024, title 256, 6000 characters and 10 embeds per
message.
"""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING, Any

import discord

from bot.councils import RESUMED_TEXT, is_long
from bot.discord import feedback
from bot.long_answer import cut_answer, split_text
from bot.progress import CouncilProgress
from bot.render_text import (
    aggregate_table,
    ballot_line,
    clip,
    neutralize_discord,
    progress_lines,
    ranking_line,
    result_header,
    short_model,
)
from core.models import Aggregate, CouncilResult, CouncilStatus, counted
from core.models.doubt import split_mention
from core.models.voice import (
    DIFFER_TITLE,
    READ_TITLE,
    STAGE_BUTTONS,
    STAGE_VIEWS,
    Author,
    Tone,
    answer_name,
    answer_state,
    answer_took,
    author_of,
    ballots_read,
    consensus_text,
    cut_note,
    deliberation_lines,
    differ_parts,
    differ_source,
    dissent_lines,
    file_summary,
    footer_fields,
    late_line,
    lens_line,
    measured,
    result_composition_line,
    review_title,
    revised_name,
    stages_of,
    stream_tail,
    written_by,
)
from core.models.voice import (
    agreement_text as w_text,
)
from core.models.voice import final_status as status_words
from core.models.voice import quote as quote_lines

if TYPE_CHECKING:
    from bot.surface import StatusView

CONTENT_MAX = 2000
DESCRIPTION_MAX = 4096
FIELD_MAX = 1024
TITLE_MAX = 256
MESSAGE_EMBED_CHARS = 6000
MESSAGE_EMBEDS = 10
STAGE_MESSAGES = 3  # ephemeral stage details: at most this many messages, then a file
# Of the chairman's text, shown in the status message while it writes: the message holds 2000
# characters, the quoted question (up to 600) and the progress lines too.
STREAM_TAIL_CHARS = 500

STATUS_MARK = "🏛️ **Council**"
FOOTER_PREFIX = "Council "

COLOR_OK = discord.Color.dark_green()
COLOR_WARN = discord.Color.orange()
COLOR_FAIL = discord.Color.red()
COLOR_INFO = discord.Color.blurple()

# render_text uses Slack shortcodes; Discord renders them only when a user types them.
_SHORTCODES = {
    ":hourglass:": "⏳",
    ":warning:": "⚠️",
    ":information_source:": "ℹ️",
    ":octagonal_sign:": "🛑",
    ":grey_question:": "❔",
}


def emoji(text: str) -> str:
    for code, char in _SHORTCODES.items():
        text = text.replace(code, char)
    return text


def safe(text: str | None) -> str:
    """Model (or user) text made harmless for Discord."""
    return neutralize_discord(text or "")


# --------------------------------------------------------------------------- status message


def quote(text: str, limit: int = 600) -> str:
    return quote_lines(clip(text.strip(), limit))


def status_content(
    question: str, council_id: str, asker_mention: str, progress: CouncilProgress | None, final: str | None = None
) -> str:
    """The one status message: who asked what, then progress lines (or the final state)."""
    head = f"{STATUS_MARK} · asked by {asker_mention} · `{council_id}`\n{quote(safe(question))}\n"
    if final is not None:
        body = final
    elif progress is None:
        body = "Convening the council…"
    else:
        lines = [emoji(line) for line in progress_lines(progress)]
        if progress.stage >= 3 and progress.chairman_text:
            tail = stream_tail(progress.chairman_text, STREAM_TAIL_CHARS)
            lines.append(quote(safe(tail), STREAM_TAIL_CHARS + 20))
        body = "\n".join(lines)
    return clip(head + "\n" + body, CONTENT_MAX)


def status_view(view: StatusView) -> dict[str, Any]:
    """The status message the runner (bot/following.py) asks for: its Stop / Synthesize now
    buttons until the final line."""
    request = view.request
    asker = f"<@{request.origin.user_id}>" if request.origin.user_id else "someone"
    shown = view.final if view.final is not None else view.note
    content = status_content(request.question, request.council_id, asker, view.progress, final=shown)
    return {"content": content, "view": control_view(request.council_id) if view.running else None}


def resumed_note() -> dict[str, Any]:
    return {"content": f"🔄 {RESUMED_TEXT}"}


def unsure_mention(result: CouncilResult, target: str) -> dict[str, Any] | None:
    """The thread message that calls the channel's role (or user) to an unsure answer: the one
    message whose mention may ping, and only that role or user (None when the target is not Discord's)."""
    unsure = result.unsure
    kind, ident = split_mention(target)
    if unsure is None or kind not in ("role", "user") or not ident.isdigit():
        return None
    if kind == "role":
        who, allowed = (
            f"<@&{ident}>",
            discord.AllowedMentions(everyone=False, users=False, roles=[discord.Object(int(ident))]),
        )
    else:
        who, allowed = (
            f"<@{ident}>",
            discord.AllowedMentions(everyone=False, roles=False, users=[discord.Object(int(ident))]),
        )
    return {"content": f"{who} {neutralize_discord(measured.unsure_line(unsure))}", "allowed_mentions": allowed}


def not_posted(council_id: str) -> str:
    return f"⚠️ Could not show the result here; try `/council-export id:{council_id}`."


def question_from_status(content: str) -> str | None:
    """The question quoted in a status message (for thread history), or None."""
    if not content.startswith(STATUS_MARK):
        return None
    lines = content.splitlines()[1:]
    quoted = []
    for line in lines:
        if not line.startswith(">"):
            break
        quoted.append(line[2:] if line.startswith("> ") else line[1:])
    return "\n".join(quoted).strip() or None


STATUS_MARKS = {Tone.OK: "✅", Tone.WARN: "⚠️", Tone.STOPPED: "🛑"}


def final_status(result: CouncilResult) -> str:
    tone, words = status_words(result)
    if tone is Tone.FAILED:
        return emoji(result_header(result))
    if tone is Tone.STOPPED:
        return f"🛑 {words}." + (" Partial result in the thread." if result.synthesis else "")
    return f"{STATUS_MARKS[tone]} {words} — the answer is in the thread."


def thread_name(question: str) -> str:
    first = " ".join(question.split())
    return clip(first or "Council", 90)


# --------------------------------------------------------------------------- packing


def pack(embeds: list[discord.Embed], budget: int = MESSAGE_EMBED_CHARS) -> list[list[discord.Embed]]:
    """Group embeds into messages of at most 10 embeds and `budget` (6000) characters."""
    messages: list[list[discord.Embed]] = []
    current: list[discord.Embed] = []
    size = 0
    for embed in embeds:
        n = len(embed)
        if current and (len(current) >= MESSAGE_EMBEDS or size + n > budget):
            messages.append(current)
            current, size = [], 0
        current.append(embed)
        size += n
    if current:
        messages.append(current)
    return messages


def text_embeds(
    text: str, *, title: str | None = None, color: discord.Color = COLOR_INFO, chunk: int = DESCRIPTION_MAX
) -> list[discord.Embed]:
    """One or more embeds carrying `text` (already neutralized); the title goes on the first."""
    # Keep each embed well under 6000 together with a title/footer so packing always works.
    chunks = split_text(text, min(chunk, DESCRIPTION_MAX)) if text else [""]
    embeds = []
    for i, part in enumerate(chunks):
        embed = discord.Embed(description=part or "\u200b", color=color)
        if i == 0 and title:
            embed.title = clip(title, TITLE_MAX)
        embeds.append(embed)
    return embeds


def markdown_file(text: str, filename: str) -> discord.File:
    return discord.File(io.BytesIO(text.encode("utf-8")), filename=filename)


# --------------------------------------------------------------------------- final result


def _color(result: CouncilResult) -> discord.Color:
    if result.status is CouncilStatus.OK:
        return COLOR_OK
    if result.status is CouncilStatus.DEGRADED:
        return COLOR_WARN
    return COLOR_FAIL


def ranking_list(aggregate: Aggregate) -> str:
    """The ranking as a Markdown list, an entry a line (one line of entries joined by `·` starting
    `1.` is one list item in Discord), then the minority views after a blank line."""
    if not aggregate.entries or all(e.average_rank is None for e in aggregate.entries):
        return ranking_line(aggregate)  # the sentence that says why there is none
    lines = []
    for entry in aggregate.entries:
        mean = f"mean rank {entry.average_rank:.2f}" if entry.average_rank is not None else "no mean rank"
        lines.append(f"{entry.position}. {short_model(entry.model)} ({mean}, {counted(entry.rankings_count, 'vote')})")
    dissent = dissent_lines(aggregate)
    return "\n".join(lines) + ("\n\n" + "\n".join(dissent) if dissent else "")


def _footer(result: CouncilResult) -> str:
    name = short_model(result.synthesis.model) if result.synthesis is not None else None
    return " · ".join(footer_fields(result, name))


def agreement_text(result: CouncilResult) -> str:
    """Kendall's W in words, the rubric's consensus, the ballots read and the reviews that came late."""
    agg = result.aggregate
    if agg is None:
        return "n/a"
    consensus = consensus_text(agg)
    return (
        f"Kendall's {w_text(agg.agreement_w)}"
        + (f"; rubric {consensus}" if consensus else "")
        + (f"; {ballots}" if (ballots := ballots_read(result)) else "")
        + (f", {agg.ballots_unparsed} unreadable" if agg.ballots_unparsed else "")
        + (f"\n{late}" if (late := late_line(result)) else "")
    )


def result_messages(result: CouncilResult, link: str | None = None) -> list[dict[str, Any]]:
    """Messages (kwargs for `send`) with the final answer: degraded notice first, answer,
    ranking and agreement as fields; `link` (the council's page in the browser app) on the title.
    A long answer is cut here; the runner attaches its full text
    (bot/following.py, the same on Slack)."""
    header = emoji(result_header(result))
    synthesis = result.synthesis
    if synthesis is not None:
        title = f"Council answer {written_by(synthesis, short_model(synthesis.model))}"
        if author_of(synthesis) is Author.STAND_IN:
            title = "⚠️ " + title
        elif author_of(synthesis) is Author.CHAIRMAN and result.status is CouncilStatus.DEGRADED:
            title = f"⚠️ {title} (degraded)"
        answer = safe(synthesis.text)
    else:
        title = "Council stopped" if result.status is CouncilStatus.CANCELLED else "Council failed"
        answer = ""
    if result.request.config.mode == "quick" and synthesis is not None:
        title += " · a quick council"
    if is_long(result) and synthesis is not None:  # whole blocks, then the note outside them (bot/long_answer.py)
        answer = cut_answer(answer) + f"\n\n*{cut_note(synthesis.text)}*"
    text = (header + "\n\n" + answer).strip() if header else answer
    embeds = text_embeds(text or "No answer.", title=title, color=_color(result))
    if link:
        embeds[0].url = link
    last = embeds[-1]
    if result.aggregate is not None:
        ranking = safe(ranking_list(result.aggregate))
        for i, part in enumerate(split_text(ranking, FIELD_MAX) if len(ranking) > FIELD_MAX else [ranking]):
            last.add_field(name="Aggregate ranking" if i == 0 else "\u200b", value=part, inline=False)
        last.add_field(name="Agreement", value=agreement_text(result), inline=False)
    if deliberation := deliberation_lines(result):
        last.add_field(
            name="How the council deliberated", value=clip(safe("\n".join(deliberation)), FIELD_MAX), inline=False
        )
    if result.aggregate is None and result.status is not CouncilStatus.FAILED:
        last.add_field(name="Aggregate ranking", value="Ranking unavailable.", inline=False)
    add_material_fields(last, result)
    return _result_sent(embeds, result)


def _result_sent(embeds: list[discord.Embed], result: CouncilResult) -> list[dict[str, Any]]:
    """The result's embeds packed into messages with a footer on every one (each part of a split
    answer says which council it is), the stage buttons under the last."""
    footer = _footer(result)
    messages: list[dict[str, Any]] = []
    for group in pack(embeds, budget=MESSAGE_EMBED_CHARS - len(footer)):
        group[-1].set_footer(text=footer)
        messages.append({"embeds": group})
    if result.status is not CouncilStatus.FAILED:  # the stage buttons, and readers' 👍 / 👎 under an answer
        view = stage_view(result.council_id, result)
        messages[-1]["view"] = feedback.with_feedback(view, result.council_id) if result.synthesis is not None else view
    return messages


def _link_title(title: str) -> str:
    return safe(clip(title, 80)).replace("[", "(").replace("]", ")")


def _link_url(url: str) -> str:
    return url.replace("(", "%28").replace(")", "%29").replace(" ", "%20")


def material_embeds(result: CouncilResult) -> list[discord.Embed]:
    """One embed with what the council read, shown before each stage's details (none when nothing)."""
    if not (result.request.sources or result.request.attachments):
        return []
    embed = discord.Embed(title=READ_TITLE)
    add_material_fields(embed, result)
    return [embed]


def add_material_fields(embed: discord.Embed, result: CouncilResult) -> None:
    """The web sources as numbered links (what the chairman's [n] point to), and the files read."""
    request = result.request
    if request.sources:
        links = [f"[{i}] [{_link_title(s.title)}]({_link_url(s.url)})" for i, s in enumerate(request.sources, 1)]
        value = "\n".join(links)
        embed.add_field(name="Sources", value=clip(value, FIELD_MAX), inline=False)
    if request.attachments:
        names = "\n".join(safe(file_summary(a)) for a in request.attachments)
        embed.add_field(name="Files read", value=clip(names, FIELD_MAX), inline=False)


# --------------------------------------------------------------------------- stage details


def answers_embeds(result: CouncilResult) -> list[discord.Embed]:
    embeds: list[discord.Embed] = []
    for answer in result.answers:
        lens = lens_line(result.request.config.lens(answer.seat or answer.model))
        if answer.ok:
            text = (f"*{safe(lens)}*\n\n" if lens else "") + safe(answer.text)
            title = f"{answer_name(answer)}{answer_state(result)}{answer_took(answer)}"
            embeds += text_embeds(text, title=title, color=COLOR_INFO, chunk=3900)
            final = result.final_text(answer)
            if final and final != answer.text:
                embeds += text_embeds(safe(final), title=revised_name(answer), color=COLOR_INFO, chunk=3900)
        else:
            why = answer.error.short() if answer.error else "no answer"
            embeds.append(
                discord.Embed(
                    title=clip(f"❌ {answer.model}", TITLE_MAX), description=clip(safe(why), 4000), color=COLOR_FAIL
                )
            )
    return embeds or [discord.Embed(description="No answers were recorded.", color=COLOR_FAIL)]


def reviews_embeds(result: CouncilResult) -> list[discord.Embed]:
    embeds: list[discord.Embed] = []
    for review in result.reviews:
        if review.error is not None or not review.text:
            embeds.append(
                discord.Embed(
                    title=clip(review_title(review), TITLE_MAX),
                    description=clip(safe(ballot_line(review)), 4000),
                    color=COLOR_FAIL,
                )
            )
            continue
        shown = ", ".join(review.shown_labels)
        part = text_embeds(safe(review.text), title=review_title(review), chunk=3800)
        part[-1].add_field(name="Ballot", value=clip(safe(ballot_line(review)), FIELD_MAX), inline=False)
        if shown:
            part[-1].add_field(name="Shown in order", value=clip(shown, FIELD_MAX), inline=False)
        embeds += part
    return embeds or [discord.Embed(description="No reviews were recorded.", color=COLOR_FAIL)]


def ranking_embeds(result: CouncilResult) -> list[discord.Embed]:
    table = aggregate_table(result.aggregate)
    embed = discord.Embed(title=STAGE_VIEWS["ranking"], description=clip(table, DESCRIPTION_MAX), color=COLOR_INFO)
    if result.label_to_model:
        labels = "\n".join(f"{label} = {model}" for label, model in sorted(result.label_to_model.items()))
        embed.add_field(name="Labels", value=clip(labels, FIELD_MAX), inline=False)
    embed.add_field(name="Agreement", value=agreement_text(result), inline=False)
    if (meter := result_composition_line(result)) is not None:  # behind the button, not under the answer
        embed.add_field(name="Where the answer came from", value=safe(meter), inline=False)
    return [embed]


def differ_embeds(result: CouncilResult) -> list[discord.Embed]:
    """Where the members stand: a field per part (its items as bullets), who wrote it in the footer."""
    embed = discord.Embed(title=DIFFER_TITLE, color=COLOR_INFO)
    for heading, items in differ_parts(result.disagreement)[:25]:
        embed.add_field(
            name=heading, value=clip("\n".join(f"• {safe(item)}" for item in items), FIELD_MAX), inline=False
        )
    if not embed.fields:
        embed.description = "The council's answers were not compared."
    elif (source := differ_source(result)) is not None:
        embed.set_footer(text=clip(source, 2048))
    return [embed]


STAGES = {"answers": answers_embeds, "reviews": reviews_embeds, "ranking": ranking_embeds, "differ": differ_embeds}


def stage_messages(result: CouncilResult, stage: str, markdown: str | None = None) -> list[dict[str, Any]]:
    groups = pack(material_embeds(result) + STAGES[stage](result))
    if len(groups) > STAGE_MESSAGES and markdown is not None:
        groups = groups[: STAGE_MESSAGES - 1]
        messages: list[dict[str, Any]] = [{"embeds": g} for g in groups]
        messages.append(
            {
                "content": "The rest is in the attached export.",
                "file": markdown_file(markdown, f"council-{result.council_id}.md"),
            }
        )
        return messages
    return [{"embeds": g} for g in groups]


# --------------------------------------------------------------------------- buttons

_LABELS = {
    **{stage: (label, discord.ButtonStyle.secondary) for stage, label in STAGE_BUTTONS.items()},
    "stop": ("Stop", discord.ButtonStyle.danger),
    "synth": ("Synthesize now", discord.ButtonStyle.primary),
}


class CouncilButton(
    discord.ui.DynamicItem[discord.ui.Button],
    template=r"council:(?P<action>answers|reviews|ranking|differ|stop|synth):(?P<id>[0-9a-f]+)",
):
    """A button whose state (action, council id) lives in its custom_id, so it works after a restart."""

    def __init__(self, action: str, council_id: str):
        label, style = _LABELS[action]
        super().__init__(discord.ui.Button(label=label, style=style, custom_id=f"council:{action}:{council_id}"))
        self.action = action
        self.council_id = council_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> CouncilButton:
        return cls(match["action"], match["id"])

    async def callback(self, interaction: discord.Interaction) -> None:
        await interaction.client.on_council_button(interaction, self.action, self.council_id)  # type: ignore[attr-defined]


def buttons(council_id: str, *actions: str) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for action in actions:
        view.add_item(CouncilButton(action, council_id))
    return view


def control_view(council_id: str) -> discord.ui.View:
    return buttons(council_id, "stop", "synth")


def stage_view(council_id: str, result: CouncilResult | None = None) -> discord.ui.View:
    """The stage buttons under an answer; with `result`, only the stages it has (voice.stages_of:
    a quick council without reviews gets no Reviews or Ranking button to open an empty stage)."""
    return buttons(council_id, *(stages_of(result) if result is not None else ("answers", "reviews", "ranking")))
