"""`/council-admin key`: the server's own provider key, in a modal (never a visible message).

The key is checked by the service with one models-list call before it is saved (an admin only:
Manage Server, checked again by the service), the outcome is shown privately, and the key is
never shown back: only its last 4 characters."""

from __future__ import annotations

import discord
from discord import app_commands

from bot.discord.interactions import NO_MENTIONS, actor_of, origin_of
from core.errors import CouncilError

TITLE = "Provider key for this server"


class KeyModal(discord.ui.Modal):
    def __init__(self) -> None:
        super().__init__(title=TITLE, custom_id="council_key", timeout=600)
        self.key: discord.ui.TextInput[KeyModal] = discord.ui.TextInput(
            label="API key", custom_id="key", max_length=512, placeholder="OpenRouter key, or the endpoint's key"
        )
        self.base_url: discord.ui.TextInput[KeyModal] = discord.ui.TextInput(
            label="Base URL (empty: OpenRouter)", custom_id="base_url", required=False, max_length=300
        )
        self.members: discord.ui.TextInput[KeyModal] = discord.ui.TextInput(
            label="Members (empty: the operator's line-up)", custom_id="members", required=False, max_length=1000
        )
        self.chairman: discord.ui.TextInput[KeyModal] = discord.ui.TextInput(
            label="Chairman (empty: the first member)", custom_id="chairman", required=False, max_length=200
        )
        for item in (self.key, self.base_url, self.members, self.chairman):
            self.add_item(item)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        service = interaction.client.service  # type: ignore[attr-defined]
        await interaction.response.defer(ephemeral=True, thinking=True)
        origin = origin_of(interaction.user, interaction.channel, interaction.guild_id)
        members = (self.members.value or "").replace(",", " ").split() or None
        try:
            info = await service.tenants.keys.save(
                actor_of(interaction),
                origin,
                self.key.value or "",
                base_url=self.base_url.value or None,
                members=members,
                chairman=(self.chairman.value or "").strip() or None,
            )
            text = f"Key {info.masked} checked and saved: this server's councils use it."
        except CouncilError as exc:
            text = exc.user_message
        await interaction.followup.send(text, ephemeral=True, allowed_mentions=NO_MENTIONS)


def add_key_command(group: app_commands.Group) -> None:
    @group.command(name="key", description="Set this server's own provider key (opens a private form)")
    async def key(interaction: discord.Interaction) -> None:
        await interaction.response.send_modal(KeyModal())
