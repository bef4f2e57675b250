"""Who and where an interaction or message comes from, and the private replies to it.

No other module of the adapter is imported here, so every one of them (feedback buttons,
admin commands, the client) can import these helpers without a cycle.
"""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord import app_commands

from core.errors import CouncilError
from core.models import Actor, Origin, Platform
from core.models.files import IncomingFile

log = logging.getLogger(__name__)

# Every message the bot sends: model text (and people's names in it) must not ping anyone.
NO_MENTIONS = discord.AllowedMentions.none()


def incoming_file(attachment: discord.Attachment) -> IncomingFile:
    """A Discord attachment for the council to read; fetched from Discord's CDN only (signed URLs, no token)."""
    return IncomingFile(
        name=attachment.filename, declared_type=attachment.content_type, size=attachment.size, url=attachment.url
    )


def origin_of(user: discord.abc.User, channel: Any, guild_id: int | None) -> Origin:
    thread = channel if isinstance(channel, discord.Thread) else None
    channel_id = thread.parent_id if thread else getattr(channel, "id", None)
    return Origin(
        platform=Platform.DISCORD,
        workspace_id=str(guild_id) if guild_id else None,
        channel_id=str(channel_id) if channel_id else None,
        thread_id=str(thread.id) if thread else None,
        user_id=str(user.id),
        user_name=getattr(user, "display_name", None) or user.name,
    )


def actor_of(interaction: discord.Interaction) -> Actor:
    """Manage Server (from the interaction's resolved permissions) makes a platform admin."""
    user = interaction.user
    admin = interaction.permissions.manage_guild
    if isinstance(user, discord.Member):
        admin = admin or user.guild_permissions.manage_guild
    return Actor(user_id=str(user.id), is_platform_admin=bool(admin))


def strip_mention(content: str, me: discord.abc.User | None) -> str:
    """`content` without the mentions of `me` (the bot), in either of Discord's two forms."""
    if me is not None:
        for token in (f"<@{me.id}>", f"<@!{me.id}>"):
            content = content.replace(token, " ")
    return content.strip()


async def reply(interaction: discord.Interaction, content: str | None = None, **kwargs: Any) -> None:
    """An ephemeral answer whether or not the interaction was already responded to."""
    kwargs.setdefault("allowed_mentions", NO_MENTIONS)
    if content is not None:
        kwargs["content"] = content
    if interaction.response.is_done():
        await interaction.followup.send(ephemeral=True, **kwargs)
    else:
        await interaction.response.send_message(ephemeral=True, **kwargs)


async def report_command_error(interaction: discord.Interaction, error: app_commands.AppCommandError) -> None:
    """A failed app command, told privately to whoever used it: a refusal in the service's words,
    anything unexpected as its exception's name only (the details go to the log)."""
    cause = error.original if isinstance(error, app_commands.CommandInvokeError) else error
    if isinstance(cause, CouncilError):
        message = cause.user_message
    elif isinstance(cause, app_commands.CheckFailure):
        message = "You can't use this command here."
    else:
        log.error("command %s failed", interaction.command and interaction.command.name, exc_info=cause)
        message = f"Something went wrong: {type(cause).__name__}."
    try:
        await reply(interaction, message)
    except discord.HTTPException:
        log.warning("could not report an error to the user")
