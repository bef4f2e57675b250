"""Who a Slack interaction is from and how to answer them alone: the `Origin` of an interaction,
workspace admins (users.info, cached for a minute), what a viewer may read of a stored council,
and ephemeral replies."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.errors import refusal
from core.models import Actor, Origin, Platform

if TYPE_CHECKING:
    from core.service import CouncilService

log = logging.getLogger(__name__)
T = TypeVar("T")

ADMIN_CACHE_S = 60.0

Respond = Callable[..., Awaitable[Any]]  # Bolt's `respond` (the interaction's response_url)


def slack_origin(
    team_id: str | None,
    channel: str | None,
    user: str | None,
    *,
    thread_ts: str | None = None,
    user_name: str | None = None,
) -> Origin:
    return Origin(
        platform=Platform.SLACK,
        workspace_id=team_id,
        channel_id=channel,
        thread_id=thread_ts,
        user_id=user,
        user_name=user_name,
    )


class SlackPeople:
    """The people behind interactions: their rights and the replies only they see."""

    def __init__(self, service: CouncilService, client: AsyncWebClient):
        self.service = service
        self.client = client
        self._admins: dict[str, tuple[float, bool]] = {}

    async def actor(self, user_id: str, *, fresh: bool = False) -> Actor:
        """Workspace admins and owners (users.info) are platform admins; cached for a minute."""
        cached = self._admins.get(user_id)
        if cached and not fresh and time.monotonic() - cached[0] < ADMIN_CACHE_S:
            return Actor(user_id=user_id, is_platform_admin=cached[1])
        is_admin = False
        try:
            info = await self.client.users_info(user=user_id)
            user = info.get("user") or {}
            is_admin = bool(user.get("is_admin") or user.get("is_owner") or user.get("is_primary_owner"))
        except SlackApiError as exc:
            log.warning("users.info failed for %s: %s", user_id, refusal(exc))
        self._admins[user_id] = (time.monotonic(), is_admin)
        return Actor(user_id=user_id, is_platform_admin=is_admin)

    async def as_viewer(self, viewer: Origin, read: Callable[[bool], Awaitable[T]]) -> T:
        """`read(admin)` of a stored council, as the service lets `viewer` see it (users.info is
        asked only when the viewer alone may not)."""
        return await self.service.as_viewer(read, lambda: self.actor(viewer.user_id or ""))

    async def ephemeral(
        self,
        channel: str | None,
        user: str,
        text: str,
        *,
        thread_ts: str | None = None,
        respond: Respond | None = None,
        blocks: list[dict[str, Any]] | None = None,
        prefer_respond: bool = False,
    ) -> None:
        """Only `user` sees it: chat.postEphemeral, or the interaction's response_url when that
        is preferred (slash commands work in channels the bot is not in) or the first fails."""
        payload: dict[str, Any] = {"text": text}
        if blocks:
            payload["blocks"] = blocks
        if prefer_respond and await _by_response_url(respond, payload):
            return
        if channel:
            try:
                await self.client.chat_postEphemeral(channel=channel, user=user, thread_ts=thread_ts, **payload)
                return
            except SlackApiError as exc:
                log.info("chat.postEphemeral failed (%s)", refusal(exc))
        if not prefer_respond:
            await _by_response_url(respond, payload)


async def _by_response_url(respond: Respond | None, payload: dict[str, Any]) -> bool:
    if respond is None:
        return False
    try:
        await respond(response_type="ephemeral", replace_original=False, **payload)
        return True
    except Exception as exc:
        log.warning("could not respond ephemerally: %s", exc)
        return False
