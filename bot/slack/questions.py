"""Questions to the council from Slack: `/council <question>` (posted in the channel first, the
council runs in its thread), @mentions and DMs (in the thread of that message; inside a thread,
the earlier messages are context), and where a council's progress and answer are shown."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.following import deliver_durable
from bot.slack import render
from bot.slack.errors import error_code, refusal
from bot.slack.files import incoming_files
from bot.slack.mrkdwn import slack_unescape, strip_mention
from bot.slack.people import Respond, SlackPeople, slack_origin
from bot.slack.surface import SlackSurface
from bot.surface import paced_write
from bot.throttle import Priority
from core.errors import CouncilError
from core.models import ConversationTurn, Destination, Origin, Platform, new_council_id
from core.models.keywords import split_keywords
from core.models.voice import files_notice

if TYPE_CHECKING:
    from bot.slack.agent import SlackAgent
    from bot.slack.history import SlackThreadHistory
    from core.service import CouncilRun, CouncilService

log = logging.getLogger(__name__)

CANNOT_POST = {
    "not_in_channel": "I'm not in this channel. Invite me with `/invite @{bot}` and ask again.",
    "channel_not_found": "I can't post in this conversation. Ask in a channel I'm in, or send me a direct message.",
    "is_archived": "This channel is archived.",
    "restricted_action": "I'm not allowed to post in this channel.",
}


def destination(channel: str, thread_ts: str, context: Any) -> Destination:
    """Where a council asked in this request is shown, with the Enterprise Grid ids bolt's
    authorisation found its installation by (a worker finds the same one from them)."""
    return Destination(
        platform=Platform.SLACK,
        channel_id=channel,
        thread_id=thread_ts,
        enterprise_id=context.enterprise_id,
        is_enterprise_install=bool(context.is_enterprise_install),
    )


class SlackQuestions:
    """Turns a slash command, a mention or a DM into a council submitted to the service."""

    def __init__(
        self,
        service: CouncilService,
        client: AsyncWebClient,
        surface: SlackSurface,
        people: SlackPeople,
        history: SlackThreadHistory,
        agent: SlackAgent,
    ):
        self.service = service
        self.client = client
        self.surface = surface
        self.people = people
        self.history = history
        self.agent = agent

    async def council_from_command(
        self,
        question: str,
        origin: Origin,
        respond: Respond | None,
        context: Any,
        *,
        members: list[str] | None = None,
        chairman: str | None = None,
    ) -> None:
        """Post the question in the channel, then start the council in its thread: a channel the
        bot cannot post in costs no rate-limit hit and leaves no council behind. `members` and
        `chairman`: chosen in `/council pick`'s modal (they win over the question's keywords)."""
        channel = origin.channel_id or ""
        chosen = split_keywords(slack_unescape(question))
        chosen = replace(chosen, members=members or chosen.members, chairman=chairman or chosen.chairman)
        # refusals -> caller (a model the channel does not allow too, before anything is posted)
        asked = await self.service.admission.check(chosen.question, origin, chosen.members, chosen.chairman)
        council_id = new_council_id()
        thread_ts = await self._post_question(asked, origin, council_id, respond, context)
        if thread_ts is None:
            return
        origin = origin.model_copy(update={"thread_id": thread_ts})  # stored with the result
        try:
            await self.service.submit_council(
                asked,
                origin,
                destination=destination(channel, thread_ts, context),
                council_id=council_id,
                search=True if chosen.search else None,
                mode=chosen.mode,
                members=chosen.members,
                chairman=chosen.chairman,
            )
        except CouncilError:  # refused in the moment since the check (a burst): take the question back
            await self._delete_quietly(channel, thread_ts)
            raise

    async def _post_question(
        self, asked: str, origin: Origin, council_id: str, respond: Respond | None, context: Any
    ) -> str | None:
        """The question's message in the channel (its ts), or None after telling the asker why not."""
        user, channel = origin.user_id or "", origin.channel_id or ""
        question_message = render.question_message(asked, user, council_id)
        try:
            posted = await paced_write(
                self.surface,
                channel,
                Priority.START,
                lambda: self.client.chat_postMessage(
                    channel=channel, unfurl_links=False, unfurl_media=False, **question_message
                ),
            )
        except SlackApiError as exc:
            code = error_code(exc)
            bot = f"<@{context.bot_user_id}>" if context.bot_user_id else "the bot"
            message = CANNOT_POST.get(code, f"I could not post in this channel ({refusal(exc)}).")
            await self.people.ephemeral(
                channel,
                user,
                message.replace("@{bot}", bot).replace("{bot}", bot),
                respond=respond,
                prefer_respond=True,
            )
            return None
        await self.service.messages.record(Platform.SLACK, channel, str(posted["ts"]), council_id, "question")
        return str(posted["ts"])

    async def _delete_quietly(self, channel: str, ts: str) -> None:
        try:
            await self.client.chat_delete(channel=channel, ts=ts)
        except Exception as exc:
            log.info("could not delete the question of a refused council: %s", exc)

    async def deliver(self, run: CouncilRun, destination: Destination, resumed: bool) -> None:
        """A durable council, wherever it was accepted, in its thread (the service's deliverer
        for Slack; bot/following.py)."""
        self.agent.follow(run, destination.channel_id, destination.thread_id or "")  # a DM's title and status line
        await deliver_durable(self.service, self.surface, run, destination, resumed)

    async def handle_message(self, event: dict[str, Any], context: Any) -> None:
        channel, user, ts = event["channel"], event["user"], event["ts"]
        thread_ts = event.get("thread_ts")
        question = slack_unescape(strip_mention(event.get("text", ""), context.bot_user_id))
        if event.get("channel_type") == "im" and question.lower() in ("help", "?"):
            await self.client.chat_postMessage(channel=channel, text=render.help_text(f"<@{context.bot_user_id}>"))
            return
        history: list[ConversationTurn] = []
        if thread_ts and thread_ts != ts:
            history = await self.history.thread_history(channel, thread_ts, ts, context)
        origin = slack_origin(event.get("team") or context.team_id, channel, user, thread_ts=thread_ts or ts)
        chosen = split_keywords(question)
        # The serving team's token (OAuth distribution: not SLACK_BOT_TOKEN) downloads its files.
        batch = await self.service.reading.read_files(incoming_files(event), Platform.SLACK, self.client.token)
        if batch.user_notices():
            await self.people.ephemeral(channel, user, files_notice(batch.user_notices()), thread_ts=thread_ts)
        try:
            await self.service.submit_council(
                chosen.question,
                origin,
                history,
                destination=destination(channel, thread_ts or ts, context),
                attachments=batch.attachments,
                search=True if chosen.search else None,
                mode=chosen.mode,
                members=chosen.members,
                chairman=chosen.chairman,
            )
        except CouncilError as exc:
            await self.people.ephemeral(channel, user, exc.user_message, thread_ts=thread_ts)
