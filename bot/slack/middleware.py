"""Listener middleware: which Slack deliveries become councils is decided once, here.

Bolt runs it before the listener; not calling `next` acknowledges the event and drops it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from slack_bolt.response import BoltResponse

if TYPE_CHECKING:
    from core.service import CouncilService

log = logging.getLogger(__name__)

Next = Callable[[], Awaitable[Any]]
Middleware = Callable[..., Awaitable[Any]]

_ACK = BoltResponse(status=200, body="")  # an event taken and dropped on purpose


async def questions_in_dms(event: dict[str, Any], next: Next) -> Any:
    """Of the `message` events, only new messages in a DM (edits, joins and the like are not)."""
    if event.get("channel_type") != "im" or event.get("subtype") not in (None, "thread_broadcast", "file_share"):
        return _ACK
    return await next()


async def not_from_bots(event: dict[str, Any], context: Any, next: Next) -> Any:
    """Our own messages and other bots' are never questions."""
    if event.get("bot_id") or event.get("user") in (None, context.bot_user_id):
        return _ACK
    return await next()


def first_delivery(service: CouncilService) -> Middleware:
    """Slack's retries of an event we already took (X-Slack-Retry-Num) and the second delivery
    of one message (app_mention and message.im of the same message) stop here."""

    async def middleware(body: dict[str, Any], event: dict[str, Any], request: Any, next: Next) -> Any:
        headers = getattr(request, "headers", None) or {}
        retry = headers.get("x-slack-retry-num")
        event_id = body.get("event_id")
        if event_id:
            if not await service.events.claim("slack", str(event_id)):
                log.info("ignoring a repeated delivery of event %s (retry %s)", event_id, retry)
                return _ACK
        elif retry:
            return _ACK
        if not await service.events.claim("slack", f"message:{event.get('channel')}:{event.get('ts')}"):
            return _ACK
        return await next()

    return middleware
