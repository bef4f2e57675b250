"""👍 / 👎 under a council's final answer on Discord, stored through the service like Slack's.

The buttons are persistent (`DynamicItem`: the vote and the council id live in the custom_id),
so they work after a restart. 👎 answers with a "What was wrong?" modal (the vote is stored
first; the comment is optional); 👍 answers privately with an "Add a comment" button that opens
the same modal. Who may vote is the service's rule (whoever can see the council).
"""

from __future__ import annotations

import logging
import re
from typing import Any

import discord

from bot.discord.interactions import NO_MENTIONS, actor_of, origin_of
from core.errors import CouncilError
from core.models.feedback import COMMENT_MAX_CHARS, Vote

log = logging.getLogger(__name__)

FEEDBACK_ROW = 1  # under the stage buttons


async def _private(interaction: discord.Interaction, content: str, **kwargs: Any) -> None:
    if interaction.response.is_done():
        await interaction.followup.send(content, ephemeral=True, allowed_mentions=NO_MENTIONS, **kwargs)
    else:
        await interaction.response.send_message(content, ephemeral=True, allowed_mentions=NO_MENTIONS, **kwargs)


def _viewer(interaction: discord.Interaction):
    return origin_of(interaction.user, interaction.channel, interaction.guild_id), actor_of(interaction)


async def _as_viewer(interaction: discord.Interaction, call) -> Any:
    """As the person; a council they cannot see from here may still be visible to an admin."""
    service = interaction.client.service  # type: ignore[attr-defined]
    viewer, actor = _viewer(interaction)
    return await service.as_viewer(lambda admin: call(viewer, admin), actor)


class CommentModal(discord.ui.Modal):
    def __init__(self, council_id: str, vote: Vote):
        super().__init__(
            title="What was wrong?" if vote is Vote.BAD else "Anything to add?",
            custom_id=f"council_fbm:{council_id}",
            timeout=600,
        )
        self.council_id = council_id
        self.comment: discord.ui.TextInput[CommentModal] = discord.ui.TextInput(
            label="Your comment (optional)",
            style=discord.TextStyle.paragraph,
            required=False,
            max_length=COMMENT_MAX_CHARS,
            custom_id="comment",
            placeholder="What should the answer have said?",
        )
        self.add_item(self.comment)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        service = interaction.client.service  # type: ignore[attr-defined]
        text = (self.comment.value or "").strip()
        if not text:
            await _private(interaction, "Thanks — your vote is recorded.")
            return
        try:
            await _as_viewer(
                interaction,
                lambda viewer, admin: service.feedback.comment(self.council_id, viewer, text, admin=admin),
            )
        except CouncilError as exc:
            await _private(interaction, exc.user_message)
            return
        await _private(interaction, f"Thanks — your comment on council `{self.council_id}` is saved.")


class FeedbackButton(
    discord.ui.DynamicItem[discord.ui.Button],
    template=r"council_fb:(?P<vote>good|bad):(?P<id>[0-9a-f]+)",
):
    def __init__(self, vote: str, council_id: str):
        super().__init__(
            discord.ui.Button(
                emoji="👍" if vote == "good" else "👎",
                style=discord.ButtonStyle.secondary,
                custom_id=f"council_fb:{vote}:{council_id}",
                row=FEEDBACK_ROW,
            )
        )
        self.vote = Vote(vote)
        self.council_id = council_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ):
        return cls(match["vote"], match["id"])

    async def callback(self, interaction: discord.Interaction) -> None:
        service = interaction.client.service  # type: ignore[attr-defined]
        try:
            await _as_viewer(
                interaction,
                lambda viewer, admin: service.feedback.vote(self.council_id, viewer, self.vote, admin=admin),
            )
        except CouncilError as exc:
            await _private(interaction, exc.user_message)
            return
        if self.vote is Vote.BAD:
            await interaction.response.send_modal(CommentModal(self.council_id, self.vote))
            return
        view = discord.ui.View(timeout=None)
        view.add_item(CommentButton(self.council_id))
        await _private(
            interaction,
            f"Thanks — your 👍 on council `{self.council_id}` is recorded. Click again to change it.",
            view=view,
        )


class CommentButton(discord.ui.DynamicItem[discord.ui.Button], template=r"council_fbc:(?P<id>[0-9a-f]+)"):
    def __init__(self, council_id: str):
        super().__init__(
            discord.ui.Button(
                label="Add a comment", style=discord.ButtonStyle.secondary, custom_id=f"council_fbc:{council_id}"
            )
        )
        self.council_id = council_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ):
        return cls(match["id"])

    async def callback(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_modal(CommentModal(self.council_id, Vote.GOOD))


DYNAMIC_ITEMS = (FeedbackButton, CommentButton)


def with_feedback(view: discord.ui.View, council_id: str) -> discord.ui.View:
    """Add 👍 / 👎 (their own row) to the view under a final answer."""
    view.add_item(FeedbackButton("good", council_id))
    view.add_item(FeedbackButton("bad", council_id))
    return view
