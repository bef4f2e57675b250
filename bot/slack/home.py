"""The app's Home tab (`views.publish`, Block Kit): the person's recent councils, this workspace's
leaderboard, the channels' council configurations, and for admins the settings of
`/council-admin` as a form (members, chairman, limits, reset) for any channel. Everything is
read and changed through the service, which decides who may (the form only calls the same
admin operations as `/council-admin`).
"""

from __future__ import annotations

import logging
import re
from functools import cached_property
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError

from bot.render_text import history_lines, leaderboard_table
from bot.slack import modals, render
from bot.slack.errors import refusal
from bot.slack.listeners import ListenerGroup
from bot.slack.tenant_key import TenantKeyForm
from core.errors import CouncilError
from core.models import Origin, Platform

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)

ACTION_ADMIN = "council_home_admin"
VIEW_ADMIN = "council_home_admin_view"
HOME_COUNCILS = 5
HOME_ROUNDS = 200  # bootstrap rounds of the Home tab's leaderboard: quick, the CLI has the full figure
FIELDS = {
    "channel": "Channel",
    "members": "Members (comma-separated model ids)",
    "chairman": "Chairman (model id)",
    "user": "Councils per user per hour",
    "channel_limit": "Councils per channel per hour",
    "budget": "Daily budget in USD",
}


def _section(text: str) -> dict[str, Any]:
    return render.section(render.clip(text, render.SECTION_CHUNK))


def _config_line(config, settings=None) -> str:
    line = f"members {', '.join(config.members)} · chairman {config.chairman}"
    if settings is not None:
        limits = [
            f"{settings.user_limit_per_hour}/h per user" if settings.user_limit_per_hour is not None else None,
            f"{settings.channel_limit_per_hour}/h per channel" if settings.channel_limit_per_hour is not None else None,
            f"${settings.daily_budget_usd:.2f}/day" if settings.daily_budget_usd is not None else None,
        ]
        if any(limits):
            line += " · " + ", ".join(x for x in limits if x)
    return render.plain(line)


def _input(block_id: str, element: dict[str, Any], *, optional: bool = True) -> dict[str, Any]:
    return {
        "type": "input",
        "block_id": block_id,
        "optional": optional,
        "label": {"type": "plain_text", "text": FIELDS[block_id]},
        "element": {**element, "action_id": block_id},
    }


def admin_modal() -> dict[str, Any]:
    text = {"type": "plain_text_input"}
    return {
        "type": "modal",
        "callback_id": VIEW_ADMIN,
        "title": {"type": "plain_text", "text": "Council settings"},
        "submit": {"type": "plain_text", "text": "Save"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            _input("channel", {"type": "conversations_select"}, optional=False),
            render.context("Leave a field empty to keep it. The same rules as `/council-admin` apply."),
            _input("members", text),
            _input("chairman", text),
            _input("user", {"type": "number_input", "is_decimal_allowed": False, "min_value": "0"}),
            _input("channel_limit", {"type": "number_input", "is_decimal_allowed": False, "min_value": "0"}),
            _input("budget", {"type": "number_input", "is_decimal_allowed": True, "min_value": "0"}),
            {
                "type": "input",
                "block_id": "reset",
                "optional": True,
                "label": {"type": "plain_text", "text": "Reset"},
                "element": {
                    "type": "checkboxes",
                    "action_id": "reset",
                    "options": [
                        {
                            "text": {"type": "plain_text", "text": "Back to the defaults (before any change above)"},
                            "value": "reset",
                        }
                    ],
                },
            },
        ],
    }


def _values(view: dict[str, Any]) -> dict[str, Any]:
    """The submitted form as {field: value} (None when empty)."""
    out: dict[str, Any] = {}
    for block_id, actions in ((view.get("state") or {}).get("values") or {}).items():
        for state in actions.values():
            if "selected_conversation" in state:
                out[block_id] = state.get("selected_conversation")
            elif "selected_options" in state:
                out[block_id] = bool(state.get("selected_options"))
            else:
                value = state.get("value")
                out[block_id] = value.strip() if isinstance(value, str) and value.strip() else None
    return out


class SlackHome(ListenerGroup):
    """The Home tab: recent councils, the leaderboard and, for admins, a channel's settings form."""

    @cached_property
    def key_form(self) -> TenantKeyForm:
        """The workspace's own provider key (bot/slack/tenant_key.py), drawn on this tab."""
        return TenantKeyForm(self.app, self.client, self.service, self.tasks, self.people, self.publish)

    def register(self) -> None:
        app = self.app
        self.key_form.register()

        @app.action(ACTION_ADMIN)
        async def open_admin(ack, body):
            await ack()
            self.tasks.spawn(self.open_admin(body), "home-admin")

        @app.view(VIEW_ADMIN)
        async def save_admin(ack, body, view):
            await ack()
            self.tasks.spawn(self.save_admin(body, view), "home-admin-save")

    async def on_opened(self, event: dict[str, Any], context: Any) -> None:
        await self.publish(event["user"], context.team_id)

    async def publish(self, user: str, team: str | None, notice: str | None = None) -> None:
        try:
            view = await self.view(user, team, notice)
            await self.client.views_publish(user_id=user, view=view)
        except SlackApiError as exc:
            log.warning("views.publish failed: %s", refusal(exc))

    async def view(self, user: str, team: str | None, notice: str | None = None) -> dict[str, Any]:
        service = self.service
        origin = Origin(platform=Platform.SLACK, workspace_id=team, user_id=user)
        actor = await self.people.actor(user)
        admin = service.permissions.is_admin(actor)
        blocks: list[dict[str, Any]] = [
            {"type": "header", "text": {"type": "plain_text", "text": "LLM Council"}},
            render.context(
                "Ask in the Messages tab, with `/council <question>`, or by mentioning me in a channel. Several "
                "models answer, review each other anonymously, and a chairman writes the final answer."
            ),
        ]
        if notice:
            blocks.append(_section(notice))
        mine = await service.queries.history(origin, "user", limit=HOME_COUNCILS)
        blocks += [{"type": "divider"}, _section("*Your recent councils*\n" + "\n".join(history_lines(mine)))]
        board = await service.leaderboard(origin, "workspace", rounds=HOME_ROUNDS)
        blocks += [{"type": "divider"}, _section("*Leaderboard · this workspace*\n" + leaderboard_table(board))]
        channels = await service.workspace.configured(Platform.SLACK, team)
        lines = [f"• Default: {_config_line(await service.workspace.default_config(Platform.SLACK, team))}"]
        lines += [f"• <#{c.channel_id}>: {_config_line(c.config, c.settings)}" for c in channels]
        blocks += [{"type": "divider"}, _section("*Channels' council configurations*\n" + "\n".join(lines))]
        blocks += await self.key_form.blocks(origin, admin)  # this workspace's own key and spend
        if admin:
            blocks.append(
                {
                    "type": "actions",
                    "block_id": "council-home-admin",
                    "elements": [render.button("Change a channel's settings", ACTION_ADMIN, "open", style="primary")],
                }
            )
            blocks.append(render.context("You see this because you are an admin of the council."))
        return {"type": "home", "blocks": blocks[: modals.MODAL_BLOCKS]}

    async def open_admin(self, body: dict[str, Any]) -> None:
        try:
            await self.client.views_open(trigger_id=body["trigger_id"], view=admin_modal())
        except SlackApiError as exc:
            log.warning("could not open the settings form: %s", refusal(exc))

    async def save_admin(self, body: dict[str, Any], view: dict[str, Any]) -> None:
        """Apply the form with the same service operations as /council-admin, then show the outcome."""
        service = self.service
        user = (body.get("user") or {}).get("id", "")
        team = (body.get("team") or {}).get("id") or (body.get("user") or {}).get("team_id")
        values = _values(view)
        channel = values.get("channel")
        done: list[str] = []
        try:
            if not channel:
                raise CouncilError("Pick a channel.")
            actor = await self.people.actor(user, fresh=True)
            origin = Origin(platform=Platform.SLACK, workspace_id=team, channel_id=channel, user_id=user)
            if values.get("reset"):
                await service.channels.reset(actor, origin)
                done.append("reset to the defaults")
            if values.get("members"):
                await service.channels.set_members(actor, origin, re.split(r"[,\s]+", values["members"]))
                done.append("members")
            if values.get("chairman"):
                await service.channels.set_chairman(actor, origin, values["chairman"])
                done.append("chairman")
            user_per_hour = int(values["user"]) if values.get("user") else None
            channel_per_hour = int(values["channel_limit"]) if values.get("channel_limit") else None
            budget = float(values["budget"]) if values.get("budget") else None
            if user_per_hour is not None or channel_per_hour is not None or budget is not None:
                await service.channels.set_limits(
                    actor,
                    origin,
                    user_per_hour=user_per_hour,
                    channel_per_hour=channel_per_hour,
                    daily_budget_usd=budget,
                )
                done.append("limits")
            notice = f":white_check_mark: <#{channel}>: " + (
                ", ".join(done) + " saved." if done else "nothing to change."
            )
        except CouncilError as exc:
            saved = f" (saved before that: {', '.join(done)})" if done else ""
            notice = f":warning: {exc.user_message}{saved}"
        except ValueError:
            notice = ":warning: Limits are whole numbers of councils per hour, and the budget a number of USD."
        await self.publish(user, team, notice)
