"""The slash commands everyone may use: /council, /council-help, /council-history,
/council-leaderboard and /council-export (the admin group is bot/discord/admin.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import discord
from discord import app_commands

from bot.councils import HISTORY_SCOPES
from bot.discord import render
from bot.discord.interactions import NO_MENTIONS, actor_of, incoming_file, origin_of, reply
from bot.discord.questions import council_from_interaction
from bot.render_text import history_lines, leaderboard_table
from core.errors import CouncilError
from core.models import MODES
from core.models.keywords import parse_mode
from core.models.voice import MODE_DESCRIPTIONS

if TYPE_CHECKING:
    from bot.discord.host import CouncilHost

HELP = f"""**LLM Council** — several models answer, review each other anonymously, a chairman synthesizes.

`/council question:` — convene a council (in a new thread, or in the current thread).
`@{{name}} question` — the same from a message; inside a council thread it continues the conversation.
Attach files (PDF, Word, text, CSV, code, images) to the message or the `attachment:` option: the council reads them.
Start a question with `search:` (or set the `search:` option) to search the web first, and with
`quick:` (or set the `mode:` option) for a quick council: {MODE_DESCRIPTIONS["quick"]};
`auto:` for an auto council: {MODE_DESCRIPTIONS["auto"]}.
`members: model-a, model-b; chairman: model-c` before a question (or the `members:`/`chairman:`
options) picks its council among the models this channel allows.
Buttons under the answer show each stage: **Answers**, **Reviews** (with the extracted ballot), **Ranking**.
While it runs: **Stop**, or **Synthesize now** with the answers that have arrived.
`/council-history` · `/council-leaderboard` · `/council-export id:`
`/council-admin show|members|chairman|allow|limits|search|mode|reset|audit` — per-channel settings (Manage Server)."""


def register_commands(bot: CouncilHost) -> None:
    """Add the commands to the bot's tree, in the order Discord lists them."""
    for add in (_add_council, _add_help, _add_history, _add_leaderboard, _add_export):
        add(bot)


def _add_council(bot: CouncilHost) -> None:
    @bot.tree.command(name="council", description="Ask the LLM council a question")
    @app_commands.describe(
        question="What should the council answer?",
        attachment="A file for the council to read (PDF, Word, text, CSV, code, or an image)",
        search="Search the web first (default: this channel's setting)",
        mode="standard: all three stages; quick: two answers compared; auto: two answers, all if they disagree",
        members="This question's members, comma-separated, among the models this channel allows",
        chairman="This question's chairman, among the models this channel allows",
    )
    @app_commands.choices(mode=[app_commands.Choice(name=m, value=m) for m in MODES])
    @app_commands.guild_only()
    async def council(
        interaction: discord.Interaction,
        question: str,
        attachment: discord.Attachment | None = None,
        search: bool | None = None,
        mode: app_commands.Choice[str] | None = None,
        members: str | None = None,
        chairman: str | None = None,
    ) -> None:
        await interaction.response.defer(thinking=True)
        files = [incoming_file(attachment)] if attachment is not None else []
        chosen = parse_mode(mode.value) if mode is not None else None
        seats = [m for m in (members or "").replace(",", " ").split() if m] or None
        await council_from_interaction(
            bot,
            interaction,
            question,
            files=files,
            search=search,
            mode=chosen,
            members=seats,
            chairman=(chairman or "").strip() or None,
        )

    @council.autocomplete("members")
    async def members_choices(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        return _member_choices(await _allowed(bot, interaction), current)

    @council.autocomplete("chairman")
    async def chairman_choices(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        allowed = await _allowed(bot, interaction)
        return [app_commands.Choice(name=m[:100], value=m[:100]) for m in allowed if current.lower() in m.lower()][:25]


def _member_choices(allowed: list[str], current: str) -> list[app_commands.Choice[str]]:
    """Discord's options have no multi-select: each choice completes the list typed so far."""
    typed = [m for m in current.replace(",", " ").split() if m]
    done, partial = (typed, "") if current.endswith((",", " ")) or not typed else (typed[:-1], typed[-1])
    return [
        app_commands.Choice(name=value[:100], value=value[:100])
        for model in allowed
        if model not in done and partial.lower() in model.lower()
        for value in [", ".join([*done, model])]
    ][:25]


async def _allowed(bot: CouncilHost, interaction: discord.Interaction) -> list[str]:
    """The models this channel allows a question to choose (the service's rule); none on a refusal."""
    try:
        return await bot.service.channels.allowed(
            origin_of(interaction.user, interaction.channel, interaction.guild_id)
        )
    except CouncilError:
        return []


def _add_help(bot: CouncilHost) -> None:
    @bot.tree.command(name="council-help", description="How to use the LLM council")
    async def council_help(interaction: discord.Interaction) -> None:
        await reply(interaction, HELP.format(name=bot.user.name if bot.user else "bot"))


def _add_history(bot: CouncilHost) -> None:
    @bot.tree.command(name="council-history", description="Recent councils")
    @app_commands.describe(scope="Whose councils", limit="How many (max 25)")
    @app_commands.guild_only()
    async def council_history(
        interaction: discord.Interaction,
        scope: Literal["channel", "server", "mine"] = "channel",
        limit: app_commands.Range[int, 1, 25] = 10,
    ) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        origin = origin_of(interaction.user, interaction.channel, interaction.guild_id)
        summaries = await bot.service.queries.history(origin, HISTORY_SCOPES[scope], limit)
        text = render.safe("\n".join(history_lines(summaries)))
        embeds = render.pack(render.text_embeds(text, title=f"Councils ({scope})"))[0]
        await interaction.followup.send(embeds=embeds, ephemeral=True, allowed_mentions=NO_MENTIONS)


def _add_leaderboard(bot: CouncilHost) -> None:
    @bot.tree.command(name="council-leaderboard", description="Model ratings from the councils' peer reviews")
    @app_commands.describe(scope="Which councils to count")
    @app_commands.guild_only()
    async def council_leaderboard(
        interaction: discord.Interaction, scope: Literal["server", "channel", "all"] = "server"
    ) -> None:
        await interaction.response.defer(thinking=True)
        origin = origin_of(interaction.user, interaction.channel, interaction.guild_id)
        board = await bot.service.leaderboard(origin, HISTORY_SCOPES[scope])
        embed = discord.Embed(
            title="Council leaderboard",
            color=render.COLOR_INFO,
            description=render.clip(leaderboard_table(board), render.DESCRIPTION_MAX),
        )
        await interaction.followup.send(embed=embed, allowed_mentions=NO_MENTIONS)


def _add_export(bot: CouncilHost) -> None:
    @bot.tree.command(name="council-export", description="Download a council as Markdown or JSON")
    @app_commands.describe(council_id="The council id (shown under each answer)", format="File format")
    @app_commands.rename(council_id="id")
    async def council_export(
        interaction: discord.Interaction, council_id: str, format: Literal["markdown", "json"] = "markdown"
    ) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        viewer = origin_of(interaction.user, interaction.channel, interaction.guild_id)
        text = await bot.service.as_viewer(
            lambda admin: bot.service.queries.export(council_id, format, viewer=viewer, admin=admin),
            actor_of(interaction),
        )
        ext = "md" if format == "markdown" else "json"
        file = render.markdown_file(text, f"council-{council_id.strip()}.{ext}")
        await interaction.followup.send(f"Council `{council_id.strip()}`", file=file, ephemeral=True)
