"""The buttons of a council's messages: Stop / Synthesize now under its progress, and the stage
buttons of an answer, which open that stage of the stored council in a modal."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.councils import control_reply
from bot.slack import modals, render
from bot.slack.errors import refusal
from bot.slack.people import Respond, SlackPeople, slack_origin
from core.errors import CouncilError, PermissionDenied
from core.models import Actor

if TYPE_CHECKING:
    from core.service import CouncilService

log = logging.getLogger(__name__)


class SlackButtons:
    """What a click on a council's buttons does."""

    def __init__(self, service: CouncilService, client: AsyncWebClient, people: SlackPeople):
        self.service = service
        self.client = client
        self.people = people

    async def handle_control(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        user = body["user"]["id"]
        council_id = action.get("value", "")
        synthesize = action.get("action_id") == render.ACTION_SYNTHESIZE
        channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
        thread_ts = (body.get("container") or {}).get("thread_ts") or (body.get("message") or {}).get("thread_ts")
        try:
            try:
                stopped = await self.service.stop(council_id, Actor(user_id=user), synthesize=synthesize)
            except PermissionDenied:  # not the asker: maybe a workspace admin
                admin = await self.people.actor(user, fresh=True)
                stopped = await self.service.stop(council_id, admin, synthesize=synthesize)
        except CouncilError as exc:
            await self.people.ephemeral(channel, user, exc.user_message, thread_ts=thread_ts)
            return
        await self.people.ephemeral(channel, user, control_reply(stopped, synthesize=synthesize), thread_ts=thread_ts)

    async def handle_stage(self, body: dict[str, Any], action: dict[str, Any], respond: Respond | None = None) -> None:
        """Open a stage of a stored council in a modal (trigger ids expire after 3 s: no detours)."""
        user = body["user"]["id"]
        channel = (body.get("channel") or {}).get("id")
        thread_ts = (body.get("container") or {}).get("thread_ts")
        stage = action["action_id"][len(render.ACTION_STAGE_PREFIX) :]
        team = (body.get("team") or {}).get("id") or (body.get("user") or {}).get("team_id")
        try:
            viewer = slack_origin(team, channel, user)
            result = await self.people.as_viewer(
                viewer, lambda admin: self.service.queries.result_for(action["value"], viewer, admin=admin)
            )
            await self.client.views_open(trigger_id=body["trigger_id"], view=modals.stage_modal(result, stage))  # type: ignore[arg-type]
        except CouncilError as exc:
            await self.people.ephemeral(channel, user, exc.user_message, thread_ts=thread_ts, respond=respond)
        except SlackApiError as exc:
            log.warning("views.open failed: %s", refusal(exc))
            await self.people.ephemeral(
                channel,
                user,
                f"Could not open the details ({refusal(exc)}). Try again.",
                thread_ts=thread_ts,
                respond=respond,
            )
