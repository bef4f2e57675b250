"""A Slack thread's earlier messages as conversation turns (the context of a follow-up)."""

from __future__ import annotations

import logging
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


class SlackThreadHistory:
    """Reads a thread with conversations.replies; which of our messages is a council's question or
    answer is the message map's (bot/history.py)."""

    def __init__(self, service: CouncilService, client: AsyncWebClient):
        self.service = service
        self.client = client

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
        return await conversation(self.service, Platform.SLACK, channel, thread)


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
