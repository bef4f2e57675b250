"""`/council` and `/council-admin`: the subcommands (help, history, leaderboard, export, admin)
and a question otherwise. (bot/commands.py is the platform-free command line, not this.)"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.councils import HISTORY_SCOPES
from bot.slack import render
from bot.slack.admin import OPERATIONS as ADMIN_OPERATIONS
from bot.slack.admin import handle_admin, parse_admin
from bot.slack.errors import refusal
from bot.slack.people import Respond, SlackPeople, slack_origin
from bot.slack.pick import pick_modal
from core.errors import CouncilError
from core.models import Actor, Origin

if TYPE_CHECKING:
    from bot.slack.questions import SlackQuestions
    from core.service import CouncilService

log = logging.getLogger(__name__)

Command = tuple[str, str]  # (kind, argument text)
Tell = Callable[..., Awaitable[None]]  # an ephemeral answer to the person who typed the command

_HISTORY_ARGS = re.compile(r"(?:(channel|workspace|mine)\s*)?(\d{1,3})?", re.IGNORECASE)
_LEADERBOARD_ARGS = re.compile(r"(channel|workspace|all)?", re.IGNORECASE)
_EXPORT_ARGS = re.compile(r"([0-9a-f]{6,32})(?:\s+(json|markdown|md))?", re.IGNORECASE)


def parse_command(text: str) -> Command:
    """A `/council` subcommand, or ("ask", question). A question that merely starts with a
    subcommand word ("history of Rome?") stays a question: subcommands have strict arguments."""
    text = (text or "").strip()
    first, _, rest = text.partition(" ")
    word, rest = first.lower(), rest.strip()
    if not text or (word in ("help", "?") and not rest):
        return ("help", "")
    if word == "pick" and not rest:
        return ("pick", "")  # the modal choosing this question's members and chairman (bot/slack/pick.py)
    if word == "history" and _HISTORY_ARGS.fullmatch(rest):
        return ("history", rest)
    if word == "leaderboard" and _LEADERBOARD_ARGS.fullmatch(rest):
        return ("leaderboard", rest)
    if word == "export" and _EXPORT_ARGS.fullmatch(rest):
        return ("export", rest)
    if word == "admin" and (not rest or rest.split()[0].lower() in (*ADMIN_OPERATIONS, "help")):
        return ("admin", rest)
    return ("ask", text)


class SlashCommands:
    """Runs a parsed slash command and answers the person who typed it, privately."""

    def __init__(self, service: CouncilService, client: AsyncWebClient, people: SlackPeople, questions: SlackQuestions):
        self.service = service
        self.client = client
        self.people = people
        self.questions = questions

    async def handle_command(
        self, kind: str, argument: str, command: dict[str, Any], respond: Respond, context: Any
    ) -> None:
        user, channel = command["user_id"], command.get("channel_id")
        trigger = command.get("trigger_id")
        if trigger and not await self.service.events.claim("slack", f"command:{trigger}"):
            return
        origin = slack_origin(
            command.get("team_id") or context.team_id, channel, user, user_name=command.get("user_name")
        )

        async def tell(text: str, blocks: list[dict[str, Any]] | None = None) -> None:
            await self.people.ephemeral(channel, user, text, respond=respond, blocks=blocks, prefer_respond=True)

        try:
            if kind == "pick":
                await self.pick(trigger, origin)
            else:
                await self._run(kind, argument, origin, tell, respond, context)
        except CouncilError as exc:
            await tell(exc.user_message)
        except SlackApiError as exc:  # a call of ours failed (an export's DM or upload): not our bug
            log.warning("/council %s: a Slack call failed: %s", kind, refusal(exc))
            await tell(f"Slack did not take it ({refusal(exc)}). Try again in a moment.")
        except Exception as exc:
            log.exception("/council %s failed", kind)
            await tell(f"Something went wrong: {type(exc).__name__}. The logs have the details.")

    async def _run(self, kind: str, argument: str, origin: Origin, tell: Tell, respond: Respond, context: Any) -> None:
        if kind == "ask":
            await self.questions.council_from_command(argument, origin, respond, context)
        elif kind == "history":
            await self.history(argument, origin, tell)
        elif kind == "leaderboard":
            board = await self.service.leaderboard(origin, HISTORY_SCOPES[(argument or "workspace").lower()])
            message = render.leaderboard_message(board)
            await tell(message["text"], message["blocks"])
        elif kind == "export":
            await self.export(argument, origin, tell)
        elif kind == "admin":
            await self.admin(argument, origin, tell)

    async def pick(self, trigger: str | None, origin: Origin) -> None:
        """`/council pick`: the modal with the models this channel allows (service.channels.allowed)."""
        allowed = await self.service.channels.allowed(origin)
        where = {"channel": origin.channel_id or "", "team": origin.workspace_id or ""}
        await self.client.views_open(trigger_id=trigger or "", view=pick_modal(allowed, where))

    async def history(self, argument: str, origin: Origin, tell: Tell) -> None:
        match = _HISTORY_ARGS.fullmatch(argument)
        scope_word = (match.group(1) or "channel").lower() if match else "channel"
        limit = int(match.group(2)) if match and match.group(2) else 10
        summaries = await self.service.queries.history(origin, HISTORY_SCOPES[scope_word], min(limit, 50))
        message = render.history_message(summaries, scope_word)
        await tell(message["text"], message["blocks"])

    async def admin(self, argument: str, origin: Origin, tell: Tell) -> None:
        user = origin.user_id or ""
        op = parse_admin(argument)
        actor = await self.people.actor(user) if op.op != "show" else Actor(user_id=user)
        message = await handle_admin(self.service, actor, origin, op)
        await tell(message["text"], message["blocks"])

    async def export(self, argument: str, origin: Origin, tell: Tell) -> None:
        match = _EXPORT_ARGS.fullmatch(argument)
        assert match is not None
        council_id, fmt = match.group(1).lower(), (match.group(2) or "markdown").lower()
        fmt = "json" if fmt == "json" else "markdown"
        text = await self.people.as_viewer(
            origin,
            lambda admin: self.service.queries.export(council_id, fmt, viewer=origin, admin=admin),  # type: ignore[arg-type]
        )
        channel = origin.channel_id
        if not channel or not channel.startswith("D"):
            opened = await self.client.conversations_open(users=origin.user_id)
            channel = opened["channel"]["id"]
        ext = "json" if fmt == "json" else "md"
        await self.client.files_upload_v2(
            channel=channel,
            content=text,
            filename=f"council-{council_id}.{ext}",
            title=f"Council {council_id}",
            initial_comment=f"Export of council `{council_id}`",
        )
        if channel != origin.channel_id:
            await tell(f"I sent `council-{council_id}.{ext}` to you in a direct message.")
