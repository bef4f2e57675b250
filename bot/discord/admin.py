"""`/council-admin` app commands: per-channel council settings, gated by Manage Server.

Discord hides the group from members without Manage Server (default_permissions), and the
service checks again (Actor.is_platform_admin comes from the interaction's permissions), so a
server that overrides the command permissions still cannot let non-admins change anything.
The service writes the audit log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands

from bot.discord import render
from bot.discord.interactions import NO_MENTIONS, actor_of, origin_of
from bot.discord.tenant_key import add_key_command
from core.models import MODES, Actor, ChannelSettings, CouncilConfig, Origin
from core.models.doubt import mention_target
from core.models.voice import lens_line

if TYPE_CHECKING:
    from bot.discord.host import CouncilHost
    from core.service import CouncilService


def _config_embed(title: str, config: CouncilConfig, channel: ChannelSettings | None = None) -> discord.Embed:
    embed = discord.Embed(title=title, color=render.COLOR_INFO)
    embed.add_field(name="Members", value=render.clip("\n".join(config.members), render.FIELD_MAX), inline=False)
    embed.add_field(name="Chairman", value=render.clip(config.chairman, render.FIELD_MAX), inline=False)
    embed.add_field(name="Mode", value=config.mode, inline=False)
    lenses = [f"{seat}: {lens}" for seat in config.members if (lens := lens_line(config.lens(seat)))]
    if lenses:
        shown = render.clip(render.safe("\n".join(lenses)), render.FIELD_MAX)
        embed.add_field(name="Lenses", value=shown, inline=False)
    if channel is not None:

        def show(value: Any, unit: str = "") -> str:
            return "default" if value is None else f"{value}{unit}"

        embed.add_field(
            name="Channel limits",
            value=(
                f"per user: {show(channel.user_limit_per_hour, '/h')} · "
                f"channel: {show(channel.channel_limit_per_hour, '/h')} · "
                f"daily budget: {show(channel.daily_budget_usd and f'${channel.daily_budget_usd:.2f}')}"
            ),
            inline=False,
        )
        search = {None: "default", True: "on", False: "off"}[channel.search]
        embed.add_field(name="Web search", value=search, inline=False)
        overridden = [name for name in ("members", "chairman") if getattr(channel, name)]
        embed.set_footer(text=f"{channel.channel_key} · overrides: {', '.join(overridden) or 'none'}")
    return embed


def _entry(entry: Any) -> str:
    """One audit entry (core.storage.AuditEntry: at, channel_key, actor_id, action, detail)."""
    at = getattr(entry, "at", None)
    when = at.strftime("%Y-%m-%d %H:%M") if at is not None else "?"
    detail = getattr(entry, "detail", None) or {}
    shown = ", ".join(f"{k}={v}" for k, v in detail.items()) if isinstance(detail, dict) else str(detail)
    return (
        f"{when} · <@{getattr(entry, 'actor_id', '?')}> · {getattr(entry, 'action', '?')} {render.safe(shown)}".strip()
    )


TITLE = "Council for this channel"


def build_admin_group(bot: CouncilHost) -> app_commands.Group:
    group = app_commands.Group(
        name="council-admin",
        description="Council settings for this channel (Manage Server)",
        default_permissions=discord.Permissions(manage_guild=True),
        guild_only=True,
    )
    for add in (
        _add_show,
        _add_members,
        _add_chairman,
        _add_allow,
        _add_limits,
        _add_search,
        _add_mode,
        _add_unsure,
        _add_lens,
        _add_reset,
        _add_audit,
    ):
        add(group, bot.service)
    add_key_command(group)
    return group


async def _begin(interaction: discord.Interaction) -> tuple[Actor, Origin]:
    await interaction.response.defer(ephemeral=True, thinking=True)
    return actor_of(interaction), origin_of(interaction.user, interaction.channel, interaction.guild_id)


async def _send(interaction: discord.Interaction, content: str | None = None, **kwargs: Any) -> None:
    if content is not None:
        kwargs["content"] = content
    await interaction.followup.send(ephemeral=True, allowed_mentions=NO_MENTIONS, **kwargs)


def _add_show(group: app_commands.Group, service: CouncilService) -> None:
    @group.command(name="show", description="The council configuration of this channel")
    async def show(interaction: discord.Interaction) -> None:
        _, origin = await _begin(interaction)
        config = await service.channels.effective_config(origin)
        channel = await service.channels.channel_settings(origin)
        await _send(interaction, embed=_config_embed(TITLE, config, channel))


def _add_members(group: app_commands.Group, service: CouncilService) -> None:
    @group.command(name="members", description="Set this channel's council members")
    @app_commands.describe(members="Model ids, comma- or space-separated; a seat with fallbacks is primary|fallback")
    async def members(interaction: discord.Interaction, members: str) -> None:
        actor, origin = await _begin(interaction)
        config = await service.channels.set_members(actor, origin, members.replace(",", " ").split())
        await _send(interaction, "Members updated.", embed=_config_embed(TITLE, config))


def _add_chairman(group: app_commands.Group, service: CouncilService) -> None:
    @group.command(name="chairman", description="Set this channel's chairman model")
    @app_commands.describe(model="Model id of the chairman")
    async def chairman(interaction: discord.Interaction, model: str) -> None:
        actor, origin = await _begin(interaction)
        config = await service.channels.set_chairman(actor, origin, model)
        await _send(interaction, "Chairman updated.", embed=_config_embed(TITLE, config))


def _add_allow(group: app_commands.Group, service: CouncilService) -> None:
    @group.command(name="allow", description="The models a question in this channel may choose as members or chairman")
    @app_commands.describe(models="Model ids, comma- or space-separated; `default`: the channel's own council")
    async def allow(interaction: discord.Interaction, models: str) -> None:
        actor, origin = await _begin(interaction)
        chosen = [] if models.strip().lower() == "default" else models.replace(",", " ").split()
        allowed = await service.channels.set_allowed(actor, origin, chosen)
        await _send(interaction, "A question here may choose: " + ", ".join(f"`{m}`" for m in allowed))


def _add_limits(group: app_commands.Group, service: CouncilService) -> None:
    @group.command(name="limits", description="Set this channel's rate limits and daily budget")
    @app_commands.describe(
        user_per_hour="Councils per user per hour",
        channel_per_hour="Councils per channel per hour",
        daily_budget_usd="Spending cap per day in USD",
    )
    async def limits(
        interaction: discord.Interaction,
        user_per_hour: app_commands.Range[int, 0] | None = None,
        channel_per_hour: app_commands.Range[int, 0] | None = None,
        daily_budget_usd: app_commands.Range[float, 0.0] | None = None,
    ) -> None:
        actor, origin = await _begin(interaction)
        updated = await service.channels.set_limits(
            actor,
            origin,
            user_per_hour=user_per_hour,
            channel_per_hour=channel_per_hour,
            daily_budget_usd=daily_budget_usd,
        )
        config = await service.channels.effective_config(origin)
        await _send(interaction, "Limits updated.", embed=_config_embed(TITLE, config, updated))


def _add_search(group: app_commands.Group, service: CouncilService) -> None:
    @group.command(name="search", description="Search the web before each council in this channel")
    @app_commands.describe(enabled="on: every council here searches first; off: only when a question asks")
    @app_commands.choices(
        enabled=[app_commands.Choice(name="on", value="on"), app_commands.Choice(name="off", value="off")]
    )
    async def search(interaction: discord.Interaction, enabled: app_commands.Choice[str]) -> None:
        actor, origin = await _begin(interaction)
        updated = await service.channels.set_search(actor, origin, enabled.value == "on")
        config = await service.channels.effective_config(origin)
        await _send(interaction, f"Web search {enabled.value}.", embed=_config_embed(TITLE, config, updated))


def _add_mode(group: app_commands.Group, service: CouncilService) -> None:
    @group.command(name="mode", description="This channel's default mode")
    @app_commands.describe(
        mode="standard: three stages; quick: two answers compared; auto: all only if two disagree; refine; self-moa"
    )
    @app_commands.choices(mode=[app_commands.Choice(name=m, value=m) for m in MODES])
    async def mode(interaction: discord.Interaction, mode: app_commands.Choice[str]) -> None:
        actor, origin = await _begin(interaction)
        updated = await service.channels.set_mode(actor, origin, mode.value)
        config = await service.channels.effective_config(origin)
        await _send(interaction, f"Mode: {mode.value}.", embed=_config_embed(TITLE, config, updated))


def _add_unsure(group: app_commands.Group, service: CouncilService) -> None:
    @group.command(name="unsure", description="The role mentioned in the thread when an answer here is unsure")
    @app_commands.describe(role="The role to mention; leave it out to mention nobody")
    async def unsure(interaction: discord.Interaction, role: discord.Role | None = None) -> None:
        actor, origin = await _begin(interaction)
        target = mention_target("role", str(role.id)) if role is not None else None
        await service.channels.set_unsure_mention(actor, origin, target)
        said = (
            f"An unsure answer here mentions {role.mention}."
            if role is not None
            else "An unsure answer mentions nobody."
        )
        await _send(interaction, said)


def _add_lens(group: app_commands.Group, service: CouncilService) -> None:
    @group.command(name="lens", description="A member's lens in this channel: a preset or a persona")
    @app_commands.describe(
        member="The member (a seat of this channel's council)",
        persona="A preset (skeptic, first-principles, on-call, pragmatist, teacher), a persona's text, or off",
    )
    async def lens(interaction: discord.Interaction, member: str, persona: str) -> None:
        actor, origin = await _begin(interaction)
        chosen = await service.channels.set_lens(actor, origin, member, persona)
        await _send(interaction, render.safe(f"{member}: {lens_line(chosen) or 'no lens'}."))


def _add_reset(group: app_commands.Group, service: CouncilService) -> None:
    @group.command(name="reset", description="Drop this channel's overrides (back to the defaults)")
    async def reset(interaction: discord.Interaction) -> None:
        actor, origin = await _begin(interaction)
        await service.channels.reset(actor, origin)
        config = await service.channels.effective_config(origin)
        await _send(interaction, "Channel settings reset.", embed=_config_embed(TITLE, config))


def _add_audit(group: app_commands.Group, service: CouncilService) -> None:
    @group.command(name="audit", description="Recent admin changes in this channel")
    @app_commands.describe(limit="How many entries (max 50)")
    async def audit(interaction: discord.Interaction, limit: app_commands.Range[int, 1, 50] = 20) -> None:
        actor, origin = await _begin(interaction)
        entries = await service.channels.audit_log(actor, origin, limit)
        text = "\n".join(_entry(e) for e in entries) or "No admin changes yet."
        await _send(
            interaction,
            embed=discord.Embed(
                title="Admin audit log", color=render.COLOR_INFO, description=render.clip(text, render.DESCRIPTION_MAX)
            ),
        )
