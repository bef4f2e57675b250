"""A Slack thread's earlier messages as conversation turns (the context of a follow-up)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.conversation import append_turn
from bot.councils import OwnMessage, own_turn
from bot.render_text import ZWSP
from bot.slack import render
from bot.slack.questions import slack_unescape, strip_mention
from bot.slack.surface import error_code
from core.models import ConversationTurn

if TYPE_CHECKING:
    from core.service import CouncilService

log = logging.getLogger(__name__)

HISTORY_PAGES = 5  # conversations.replies pages read for a thread follow-up (200 messages each)


class SlackThreadHistory:
    """Reads a thread with conversations.replies; our own messages become the assistant's turns."""

    def __init__(self, service: CouncilService, client: AsyncWebClient):
        self.service = service
        self.client = client

    async def thread_history(
        self, channel: str, thread_ts: str, before_ts: str, context: Any
    ) -> list[ConversationTurn]:
        """The thread's earlier messages as conversation turns: our answers as the assistant."""
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
            log.warning("conversations.replies failed: %s", error_code(exc))
            return []
        turns: list[ConversationTurn] = []
        seen: set[str] = set()
        for message in sorted({m["ts"]: m for m in messages}.values(), key=lambda m: float(m["ts"])):
            if float(message["ts"]) >= float(before_ts):
                break
            append_turn(turns, await self.turn_of(message, context, seen))
        return turns

    async def turn_of(self, message: dict[str, Any], context: Any, seen: set[str]) -> ConversationTurn | None:
        own = message.get("user") == context.bot_user_id or (
            context.bot_id is not None and message.get("bot_id") == context.bot_id
        )
        if own:
            ref = render.council_ref(message)
            if ref is None:
                return None  # help, uploads and other notes
            kind, council_id = ref
            if kind == "s":
                return None
            if kind == "q":  # the question's text is the stored (or running) council's
                return await own_turn(self.service, OwnMessage("question", council_id, None), seen)
            shown = "\n".join(
                b["text"]["text"]
                for b in message.get("blocks") or []
                if b.get("type") == "section" and isinstance(b.get("text"), dict)
            )
            answer = OwnMessage("answer", council_id, slack_unescape(shown.replace(ZWSP, "")))
            return await own_turn(self.service, answer, seen)
        if message.get("bot_id") or message.get("subtype") not in (None, "thread_broadcast", "file_share"):
            return None
        text = slack_unescape(strip_mention(message.get("text", ""), context.bot_user_id))
        return ConversationTurn(role="user", content=text, author=message.get("user")) if text else None
