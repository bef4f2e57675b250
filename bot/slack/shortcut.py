"""The message shortcut "Ask the council about this message": a modal quotes the message and asks
for the question; the council answers in that message's thread with the message (and the thread
before it) as conversation and its files as attachments. Refusals (limits, permissions, a missing
key) go to the asker only, in that thread, as for a mention.

The modal carries only where the message is (private_metadata); the message itself is read again
on submit with conversations.replies, so any replica can take the submission."""

from __future__ import annotations

import json
import logging
from typing import Any

from slack_sdk.errors import SlackApiError

from bot.slack import render
from bot.slack.errors import refusal
from bot.slack.files import incoming_files
from bot.slack.history import SlackThreadHistory
from bot.slack.listeners import ListenerGroup
from bot.slack.mrkdwn import plain, slack_unescape
from bot.slack.people import slack_origin
from bot.slack.pick import ask_form, picked_seats
from bot.slack.questions import destination
from core.errors import CouncilError
from core.models import Platform
from core.models.keywords import split_keywords
from core.models.voice import files_notice

log = logging.getLogger(__name__)

CALLBACK = "council_ask_message"  # the manifest's shortcut callback_id
VIEW = "council_ask_message_view"
QUOTE_CHARS = 2500


def ask_modal(message: dict[str, Any], where: dict[str, str], allowed: list[str] | None = None) -> dict[str, Any]:
    text = render.clip(plain(message.get("text") or ""), QUOTE_CHARS) or "_(no text)_"
    files = [f.get("name") or "file" for f in message.get("files") or [] if isinstance(f, dict)]
    blocks: list[dict[str, Any]] = [render.section(render.quote(text))]
    if files:
        blocks.append(render.context(plain("Files the council will read: " + ", ".join(files))))
    return ask_form(VIEW, "Your question about it", where, allowed or [], blocks)


class MessageShortcut(ListenerGroup):
    history: SlackThreadHistory

    def register(self) -> None:
        self.history = SlackThreadHistory(self.service, self.client)

        @self.app.shortcut(CALLBACK)
        async def shortcut(ack, body):
            await ack()
            self.tasks.spawn(self.open(body), "shortcut")

        @self.app.view(VIEW)
        async def submitted(ack, body, view, context):
            await ack()
            self.tasks.spawn(self.ask(body, view, context), "shortcut-ask")

    async def open(self, body: dict[str, Any]) -> None:
        message = body.get("message") or {}
        where = {
            "channel": (body.get("channel") or {}).get("id", ""),
            "ts": str(message.get("ts") or body.get("message_ts") or ""),
            "thread": str(message.get("thread_ts") or message.get("ts") or ""),
        }
        team = (body.get("team") or {}).get("id") or ""
        asker = slack_origin(team, where["channel"], (body.get("user") or {}).get("id", ""))
        try:
            allowed = await self.service.channels.allowed(asker)
        except CouncilError:  # the modal still asks; the council's own refusal comes on submit
            allowed = []
        try:
            await self.client.views_open(trigger_id=body["trigger_id"], view=ask_modal(message, where, allowed))
        except SlackApiError as exc:
            log.warning("could not open the shortcut's modal: %s", refusal(exc))

    async def ask(self, body: dict[str, Any], view: dict[str, Any], context: Any) -> None:
        where = json.loads(view.get("private_metadata") or "{}")
        channel, ts, thread = where.get("channel", ""), where.get("ts", ""), where.get("thread", "")
        user = (body.get("user") or {}).get("id", "")
        team = (body.get("team") or {}).get("id") or context.team_id
        values = ((view.get("state") or {}).get("values") or {}).get("question") or {}
        question = slack_unescape(((values.get("question") or {}).get("value") or "").strip())
        chosen = split_keywords(question)
        members, chairman = picked_seats(view)
        message = await self._message(channel, thread, ts)
        history = await self.history.thread_history(channel, thread, ts, context, through=True)
        batch = await self.service.reading.read_files(incoming_files(message), Platform.SLACK, self.client.token)
        if batch.user_notices():
            await self.people.ephemeral(channel, user, files_notice(batch.user_notices()), thread_ts=thread)
        try:
            await self.service.submit_council(
                chosen.question,
                slack_origin(team, channel, user, thread_ts=thread),
                history,
                destination=destination(channel, thread, context),
                attachments=batch.attachments,
                search=True if chosen.search else None,
                mode=chosen.mode,
                members=members or chosen.members,
                chairman=chairman or chosen.chairman,
            )
        except CouncilError as exc:
            await self.people.ephemeral(channel, user, exc.user_message, thread_ts=thread)

    async def _message(self, channel: str, thread: str, ts: str) -> dict[str, Any]:
        """The message as it is now (its files included); {} when it cannot be read."""
        try:
            page = await self.client.conversations_replies(channel=channel, ts=thread, limit=200)
        except SlackApiError as exc:
            log.warning("conversations.replies failed: %s", refusal(exc))
            return {}
        return next((m for m in page.get("messages") or [] if m.get("ts") == ts), {})
