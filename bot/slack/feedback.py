"""Feedback under every final answer in Slack: a `context_actions` block with `feedback_buttons`
(👍 / 👎). A click is stored through the service (which decides who may vote), acknowledged
privately, and offers an optional "what was wrong?" modal whose text is stored as the comment.
A 👎 opens that modal at once (its trigger id lives 3 s); a 👍 offers it as a button.
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError

from bot.slack.errors import refusal
from bot.slack.listeners import ListenerGroup
from core.errors import CouncilError
from core.models import Origin, Platform
from core.models.feedback import COMMENT_MAX_CHARS, Vote

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)

ACTION_FEEDBACK = "council_feedback"
ACTION_COMMENT = "council_feedback_comment"
VIEW_COMMENT = "council_feedback_view"
COMMENT_BLOCK = "feedback_comment"
COMMENT_INPUT = "comment"
FEEDBACK_BLOCK = "council-fb-"


def feedback_block(council_id: str) -> dict[str, Any]:
    """The 👍 / 👎 under an answer; each button's value names the vote and the council."""
    return {
        "type": "context_actions",
        "block_id": f"{FEEDBACK_BLOCK}{council_id}",
        "elements": [
            {
                "type": "feedback_buttons",
                "action_id": ACTION_FEEDBACK,
                "positive_button": {
                    "text": {"type": "plain_text", "text": "👍"},
                    "accessibility_label": "This answer was good",
                    "value": f"good:{council_id}",
                },
                "negative_button": {
                    "text": {"type": "plain_text", "text": "👎"},
                    "accessibility_label": "This answer was not good",
                    "value": f"bad:{council_id}",
                },
            }
        ],
    }


def parse_value(value: str) -> tuple[Vote, str] | None:
    kind, _, council_id = (value or "").partition(":")
    if kind not in ("good", "bad") or not re.fullmatch(r"[0-9a-f]{6,32}", council_id):
        return None
    return Vote(kind), council_id


def comment_modal(council_id: str, channel: str | None, vote: Vote) -> dict[str, Any]:
    question = "What was wrong?" if vote is Vote.BAD else "Anything to add?"
    return {
        "type": "modal",
        "callback_id": VIEW_COMMENT,
        "private_metadata": json.dumps({"council_id": council_id, "channel": channel}),
        "title": {"type": "plain_text", "text": "Feedback"},
        "submit": {"type": "plain_text", "text": "Send"},
        "close": {"type": "plain_text", "text": "Skip"},
        "blocks": [
            {
                "type": "input",
                "block_id": COMMENT_BLOCK,
                "optional": True,
                "label": {"type": "plain_text", "text": question},
                "element": {
                    "type": "plain_text_input",
                    "action_id": COMMENT_INPUT,
                    "multiline": True,
                    "max_length": COMMENT_MAX_CHARS,
                    "placeholder": {"type": "plain_text", "text": "Optional: what should the answer have said?"},
                },
            }
        ],
    }


def _ack_blocks(text: str, council_id: str) -> list[dict[str, Any]]:
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": text}},
        {
            "type": "actions",
            "block_id": f"council-fb-ack-{council_id}",
            "elements": [
                {
                    "type": "button",
                    "text": {"type": "plain_text", "text": "Add a comment"},
                    "action_id": ACTION_COMMENT,
                    "value": council_id,
                }
            ],
        },
    ]


class SlackFeedback(ListenerGroup):
    """The listeners of the feedback buttons, the comment button and the comment modal."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._votes: dict[tuple[str, str], Vote] = {}  # (council, user) -> last vote, for the modal's wording

    def register(self) -> None:
        app = self.app

        @app.action(ACTION_FEEDBACK)
        async def feedback(ack, body, action):
            await ack()
            self.tasks.spawn(self.handle_vote(body, action), "feedback")

        @app.action(ACTION_COMMENT)
        async def comment_button(ack, body, action):
            await ack()
            self.tasks.spawn(self.open_comment(body, action.get("value", "")), "feedback-comment")

        @app.view(VIEW_COMMENT)
        async def comment_view(ack, body, view):
            await ack()
            self.tasks.spawn(self.handle_comment(body, view), "feedback-comment-view")

    @staticmethod
    def _where(body: dict[str, Any]) -> tuple[str | None, str | None]:
        container = body.get("container") or {}
        channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
        thread_ts = container.get("thread_ts") or (body.get("message") or {}).get("thread_ts")
        return channel, thread_ts

    def _viewer(self, body: dict[str, Any], channel: str | None) -> Origin:
        user = body.get("user") or {}
        team = (body.get("team") or {}).get("id") or user.get("team_id")
        return Origin(
            platform=Platform.SLACK,
            workspace_id=team,
            channel_id=channel,
            user_id=user.get("id"),
            user_name=user.get("username") or user.get("name"),
        )

    async def handle_vote(self, body: dict[str, Any], action: dict[str, Any]) -> None:
        channel, thread_ts = self._where(body)
        viewer = self._viewer(body, channel)
        user = viewer.user_id or ""
        parsed = parse_value(action.get("value", ""))
        if parsed is None:
            log.info("ignoring a feedback click with an unknown value")
            return
        vote, council_id = parsed
        try:
            await self.people.as_viewer(
                viewer, lambda admin: self.service.feedback.vote(council_id, viewer, vote, admin=admin)
            )
        except CouncilError as exc:
            await self.people.ephemeral(channel, user, exc.user_message, thread_ts=thread_ts)
            return
        self._votes[(council_id, user)] = vote
        if vote is Vote.BAD and body.get("trigger_id"):
            await self._open(body["trigger_id"], council_id, channel, vote)
        mark = "👍" if vote is Vote.GOOD else "👎"
        text = f"Thanks — your {mark} on council `{council_id}` is recorded. Click again to change it."
        await self.people.ephemeral(channel, user, text, thread_ts=thread_ts, blocks=_ack_blocks(text, council_id))

    async def open_comment(self, body: dict[str, Any], council_id: str) -> None:
        channel, _ = self._where(body)
        user = (body.get("user") or {}).get("id", "")
        await self._open(body.get("trigger_id"), council_id, channel, self._votes.get((council_id, user), Vote.GOOD))

    async def _open(self, trigger_id: str | None, council_id: str, channel: str | None, vote: Vote) -> None:
        if not trigger_id:
            return
        try:
            await self.client.views_open(trigger_id=trigger_id, view=comment_modal(council_id, channel, vote))
        except SlackApiError as exc:
            log.info("could not open the feedback modal: %s", refusal(exc))

    async def handle_comment(self, body: dict[str, Any], view: dict[str, Any]) -> None:
        try:
            meta = json.loads(view.get("private_metadata") or "{}")
        except ValueError:
            return
        council_id, channel = str(meta.get("council_id") or ""), meta.get("channel")
        values = (view.get("state") or {}).get("values") or {}
        text = ((values.get(COMMENT_BLOCK) or {}).get(COMMENT_INPUT) or {}).get("value") or ""
        viewer = self._viewer(body, channel)
        if not text.strip():
            return  # the comment is optional: sending an empty box keeps the vote as it is
        try:
            await self.people.as_viewer(
                viewer, lambda admin: self.service.feedback.comment(council_id, viewer, text, admin=admin)
            )
        except CouncilError as exc:
            await self.people.ephemeral(channel, viewer.user_id or "", exc.user_message)
            return
        await self.people.ephemeral(
            channel, viewer.user_id or "", f"Thanks — your comment on council `{council_id}` is saved."
        )
