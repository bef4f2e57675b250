"""The workspace's own provider key on the Home tab: its state and today's spend for everyone, and
for admins a form (key, base URL, line-up) whose key is checked by the service with one
models-list call before it is saved. The key is never shown back: only its last 4 characters."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError

from bot.slack import render
from bot.slack.errors import refusal
from bot.slack.listeners import ListenerGroup
from core.errors import CouncilError
from core.models import Origin, Platform

if TYPE_CHECKING:
    from slack_bolt.async_app import AsyncApp
    from slack_sdk.web.async_client import AsyncWebClient

    from bot.slack.people import SlackPeople
    from bot.slack.tasks import BackgroundTasks
    from core.service import CouncilService

log = logging.getLogger(__name__)

ACTION_KEY = "council_home_key"
VIEW_KEY = "council_home_key_view"
REMOVE = "remove"


def key_modal() -> dict[str, Any]:
    def text_input(block_id: str, label: str, hint: str, *, optional: bool = True) -> dict[str, Any]:
        return {
            "type": "input",
            "block_id": block_id,
            "optional": optional,
            "label": {"type": "plain_text", "text": label},
            "hint": {"type": "plain_text", "text": hint},
            "element": {"type": "plain_text_input", "action_id": block_id},
        }

    return {
        "type": "modal",
        "callback_id": VIEW_KEY,
        "title": {"type": "plain_text", "text": "Provider key"},
        "submit": {"type": "plain_text", "text": "Check and save"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            render.context(
                "This workspace's councils will use this key (and line-up) instead of the operator's. "
                "It is checked with one call to the endpoint's model list, stored encrypted, and never shown again."
            ),
            text_input("key", "API key", "OpenRouter key, or the key of the endpoint below", optional=False),
            text_input("base_url", "Base URL", "Empty: OpenRouter. Else an OpenAI-compatible …/v1 endpoint"),
            text_input("members", "Members", "Comma-separated model ids; empty: the operator's line-up"),
            text_input("chairman", "Chairman", "A model id; empty: the first member"),
        ],
    }


def _values(view: dict[str, Any]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for block_id, actions in ((view.get("state") or {}).get("values") or {}).items():
        for state in actions.values():
            value = state.get("value")
            out[block_id] = value.strip() if isinstance(value, str) and value.strip() else None
    return out


class TenantKeyForm(ListenerGroup):
    """Registered with the Home tab; `publish` (SlackHome.publish) redraws the Home tab with the outcome."""

    def __init__(
        self,
        app: AsyncApp,
        client: AsyncWebClient,
        service: CouncilService,
        tasks: BackgroundTasks,
        people: SlackPeople,
        publish: Callable[[str, str | None, str | None], Awaitable[None]],
    ):
        super().__init__(app, client, service, tasks, people)
        self.publish = publish

    def register(self) -> None:
        @self.app.action(ACTION_KEY)
        async def open_key(ack, body, action):
            await ack()
            self.tasks.spawn(self.open(body, action), "home-key")

        @self.app.view(VIEW_KEY)
        async def save_key(ack, body, view):
            await ack()
            self.tasks.spawn(self.save(body, view), "home-key-save")

    async def blocks(self, origin: Origin, admin: bool) -> list[dict[str, Any]]:
        """The Home tab's section: the key's state (admins) and this workspace's spend today."""
        service = self.service
        lines = []
        spend = await service.tenants.budgets.spend_for(origin)
        if spend is not None:
            budget = f" of ${spend.daily_budget_usd:.2f}" if spend.daily_budget_usd is not None else ""
            lines.append(f"Spent today: ${spend.spent_today_usd:.4f}{budget} (this workspace, all channels)")
        if admin:
            info = await service.tenants.keys.info(origin)
            if info is None:
                lines.append("Provider key: none, councils use the operator's.")
            else:
                lineup = ", ".join(info.members) if info.members else "the operator's line-up"
                lines.append(f"Provider key: {info.masked} · {info.base_url or 'OpenRouter'} · {lineup}")
        if not lines:
            return []
        blocks = [{"type": "divider"}, render.section(render.plain("\n".join(lines)))]
        if admin:
            elements = [render.button("Set the provider key", ACTION_KEY, "open")]
            elements.append(render.button("Remove the key", ACTION_KEY, REMOVE))
            blocks.append({"type": "actions", "block_id": "council-home-key", "elements": elements})
        return blocks

    async def open(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        if action.get("value") == REMOVE:
            user, team = _who(body)
            try:
                actor = await self.people.actor(user, fresh=True)
                removed = await self.service.tenants.keys.remove(actor, _origin(team, user))
                notice = ":white_check_mark: Key removed." if removed else "There was no key to remove."
            except CouncilError as exc:
                notice = f":warning: {exc.user_message}"
            await self.publish(user, team, notice)
            return
        try:
            await self.client.views_open(trigger_id=body["trigger_id"], view=key_modal())
        except SlackApiError as exc:
            log.warning("could not open the provider key form: %s", refusal(exc))

    async def save(self, body: dict[str, Any], view: dict[str, Any]) -> None:
        user, team = _who(body)
        values = _values(view)
        try:
            actor = await self.people.actor(user, fresh=True)
            members = re.split(r"[,\s]+", values["members"] or "") if values.get("members") else None
            info = await self.service.tenants.keys.save(
                actor,
                _origin(team, user),
                values.get("key") or "",
                base_url=values.get("base_url"),
                members=members,
                chairman=values.get("chairman"),
            )
            notice = f":white_check_mark: Key {info.masked} checked and saved; this workspace's councils use it."
        except CouncilError as exc:
            notice = f":warning: {exc.user_message}"
        await self.publish(user, team, notice)


def _who(body: dict[str, Any]) -> tuple[str, str | None]:
    user = body.get("user") or {}
    return user.get("id", ""), (body.get("team") or {}).get("id") or user.get("team_id")


def _origin(team: str | None, user: str) -> Origin:
    return Origin(platform=Platform.SLACK, workspace_id=team, user_id=user)
