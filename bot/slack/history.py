"""A Slack thread's earlier messages as conversation turns (the context of a follow-up)."""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.history import ThreadMessage, conversation
from bot.render_text import ZWSP
from bot.slack.errors import refusal
from bot.slack.mrkdwn import slack_unescape, strip_mention
from core.models import ConversationTurn, Platform

if TYPE_CHECKING:
    from core.service import CouncilService

log = logging.getLogger(__name__)

HISTORY_PAGES = 5  # conversations.replies pages read for a thread follow-up (200 messages each)
NAME_CACHE_S = 600.0  # a person's name, from users.info, is asked again after this long


class SlackThreadHistory:
    """Reads a thread with conversations.replies; which of our messages is a council's question or
    answer is the message map's (bot/history.py)."""

    def __init__(self, service: CouncilService, client: AsyncWebClient):
        self.service = service
        self.client = client
        self._names: dict[str, tuple[float, str]] = {}

    async def thread_history(
        self, channel: str, thread_ts: str, before_ts: str, context: Any, *, through: bool = False
    ) -> list[ConversationTurn]:
        """The thread's earlier messages as conversation turns: our answers as the assistant.
        `through`: the message at `before_ts` too (a message shortcut asks about it)."""
        messages: list[dict[str, Any]] = []
        cursor = None
        try:
            for _ in range(HISTORY_PAGES):
                page = await self.client.conversations_replies(
                    channel=channel, ts=thread_ts, limit=200, **({"cursor": cursor} if cursor else {})
                )
                messages += page.get("messages") or []
                cursor = (page.get("response_metadata") or {}).get("next_cursor")
                if not cursor or not page.get("has_more", True):
                    break
        except SlackApiError as exc:
            log.warning("conversations.replies failed: %s", refusal(exc))
            return []
        earlier = sorted(
            (
                m
                for m in {m["ts"]: m for m in messages}.values()
                if float(m["ts"]) < float(before_ts) or (through and m["ts"] == before_ts)
            ),
            key=lambda m: float(m["ts"]),
        )
        thread = [read for m in earlier if (read := thread_message(m, context)) is not None]
        return await conversation(self.service, Platform.SLACK, channel, await self._named(thread))

    async def _named(self, thread: list[ThreadMessage]) -> list[ThreadMessage]:
        """The thread with each person named as Slack shows them, not by user id: the members
        read "alice: ..." and can tell who asked what."""
        names = {user: await self.name(user) for user in {m.author for m in thread if m.author}}
        return [replace(m, author=names[m.author]) if m.author else m for m in thread]

    async def name(self, user_id: str) -> str:
        """The person's display name (users.info, cached); their id when Slack will not say."""
        cached = self._names.get(user_id)
        if cached is not None and time.monotonic() - cached[0] < NAME_CACHE_S:
            return cached[1]
        name = user_id
        try:
            info = await self.client.users_info(user=user_id)
            name = person_name(info.get("user") or {}) or user_id
        except SlackApiError as exc:
            log.info("users.info failed for %s: %s", user_id, refusal(exc))
        self._names[user_id] = (time.monotonic(), name)
        return name


def person_name(user: dict[str, Any]) -> str | None:
    """What Slack shows for a person: the display name they chose, else their full name, else their handle."""
    profile = user.get("profile") or {}
    for name in (profile.get("display_name"), user.get("real_name"), profile.get("real_name"), user.get("name")):
        if isinstance(name, str) and name.strip():
            return name.strip()
    return None


def thread_message(message: dict[str, Any], context: Any) -> ThreadMessage | None:
    """A Slack message as history reads it (None: never context: other bots, joins, edits)."""
    ours = message.get("user") == context.bot_user_id or (
        context.bot_id is not None and message.get("bot_id") == context.bot_id
    )
    if ours:
        return ThreadMessage(message["ts"], ours=True, author=None, text=_shown_text(message))
    if message.get("bot_id") or message.get("subtype") not in (None, "thread_broadcast", "file_share"):
        return None
    text = slack_unescape(strip_mention(message.get("text", ""), context.bot_user_id))
    return ThreadMessage(message["ts"], ours=False, author=message.get("user"), text=text)


def _shown_text(message: dict[str, Any]) -> str:
    """What one of our messages shows: its sections' text (blocks carry it; `text` is the fallback)."""
    shown = "\n".join(
        b["text"]["text"]
        for b in message.get("blocks") or []
        if b.get("type") == "section" and isinstance(b.get("text"), dict)
    )
    return slack_unescape(shown.replace(ZWSP, ""))
