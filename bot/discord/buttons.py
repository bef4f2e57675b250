"""What the council's buttons do (render.CouncilButton): Stop / Synthesize now while it runs,
and each stage's details, privately, under the answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord

from bot.councils import control_reply
from bot.discord import render
from bot.discord.interactions import NO_MENTIONS, actor_of, origin_of, reply
from core.errors import CouncilError
from core.models import CouncilResult

if TYPE_CHECKING:
    from core.service import CouncilService


async def on_council_button(
    service: CouncilService, interaction: discord.Interaction, action: str, council_id: str
) -> None:
    if action in ("stop", "synth"):
        await _control(service, interaction, council_id, synthesize=action == "synth")
        return
    await interaction.response.defer(ephemeral=True, thinking=True)
    viewer = origin_of(interaction.user, interaction.channel, interaction.guild_id)

    async def read(admin: bool) -> tuple[CouncilResult, str | None]:
        result = await service.queries.result_for(council_id, viewer, admin=admin)
        wanted = action not in ("ranking", "differ")  # the export carries what does not fit in three messages
        return result, await service.queries.export(council_id, viewer=viewer, admin=admin) if wanted else None

    try:
        result, markdown = await service.as_viewer(read, actor_of(interaction))
    except CouncilError as exc:
        await reply(interaction, exc.user_message)
        return
    for kwargs in render.stage_messages(result, action, markdown):
        await interaction.followup.send(ephemeral=True, allowed_mentions=NO_MENTIONS, **kwargs)


async def _control(
    service: CouncilService, interaction: discord.Interaction, council_id: str, *, synthesize: bool
) -> None:
    """Stop the council, or have its chairman synthesize from the answers already in."""
    try:
        stopped = await service.stop(council_id, actor_of(interaction), synthesize=synthesize)
    except CouncilError as exc:
        await reply(interaction, exc.user_message)
        return
    await reply(interaction, control_reply(stopped, synthesize=synthesize))
