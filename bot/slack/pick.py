"""`/council pick`: a modal that asks one question with its own members and chairman, chosen among
the models the channel allows (service.channels.allowed). The council then answers in
the channel as for `/council <question>`; the message shortcut's modal (bot/slack/shortcut.py)
offers the same selects."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bot.slack.listeners import ListenerGroup
from bot.slack.mrkdwn import slack_unescape
from bot.slack.people import slack_origin
from core.errors import CouncilError

if TYPE_CHECKING:
    from slack_bolt.async_app import AsyncApp
    from slack_sdk.web.async_client import AsyncWebClient

    from bot.slack.people import SlackPeople
    from bot.slack.questions import SlackQuestions
    from bot.slack.tasks import BackgroundTasks
    from core.service import CouncilService

log = logging.getLogger(__name__)

VIEW = "council_pick_view"


MAX_OPTIONS = 100  # Slack's limit of a select's options


def _option(model: str) -> dict[str, Any]:
    return {"text": {"type": "plain_text", "text": model[:75]}, "value": model[:150]}


def seat_selects(allowed: list[str]) -> list[dict[str, Any]]:
    """Optional selects of the question's own members and chairman among the models the channel
    allows (service.channels.allowed); left empty, the channel's council answers."""
    if not allowed:
        return []
    options = [_option(m) for m in allowed[:MAX_OPTIONS]]
    return [
        {
            "type": "input",
            "block_id": "members",
            "optional": True,
            "label": {"type": "plain_text", "text": "Members (optional: the channel's by default)"},
            "element": {"type": "multi_static_select", "action_id": "members", "options": options},
        },
        {
            "type": "input",
            "block_id": "chairman",
            "optional": True,
            "label": {"type": "plain_text", "text": "Chairman (optional)"},
            "element": {"type": "static_select", "action_id": "chairman", "options": options},
        },
    ]


def picked_seats(view: dict[str, Any]) -> tuple[list[str] | None, str | None]:
    """The members and chairman chosen in the modal's selects (None: not chosen)."""
    values = (view.get("state") or {}).get("values") or {}
    members = [o["value"] for o in ((values.get("members") or {}).get("members") or {}).get("selected_options") or []]
    chairman = (((values.get("chairman") or {}).get("chairman") or {}).get("selected_option") or {}).get("value")
    return members or None, chairman or None


def ask_form(
    view: str, label: str, where: dict[str, str], allowed: list[str], before: Sequence[dict[str, Any]] = ()
) -> dict[str, Any]:
    """A modal asking the council: `before` (what it is about), the question box labelled `label`,
    and the selects; `where` rides along in private_metadata (any replica can take the submission)."""
    question = {
        "type": "input",
        "block_id": "question",
        "label": {"type": "plain_text", "text": label},
        "element": {"type": "plain_text_input", "action_id": "question", "multiline": True, "max_length": 3000},
    }
    return {
        "type": "modal",
        "callback_id": view,
        "title": {"type": "plain_text", "text": "Ask the council"},
        "submit": {"type": "plain_text", "text": "Ask"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "private_metadata": json.dumps(where),
        "blocks": [*before, question, *seat_selects(allowed)],
    }


def pick_modal(allowed: list[str], where: dict[str, str]) -> dict[str, Any]:
    """`/council pick`'s form; `where`: the channel and team."""
    return ask_form(VIEW, "Your question", where, allowed)


class PickModal(ListenerGroup):
    """The submitted form becomes a council through `questions`, as `/council <question>` does."""

    def __init__(
        self,
        app: AsyncApp,
        client: AsyncWebClient,
        service: CouncilService,
        tasks: BackgroundTasks,
        people: SlackPeople,
        questions: SlackQuestions,
    ):
        super().__init__(app, client, service, tasks, people)
        self.questions = questions

    def register(self) -> None:
        @self.app.view(VIEW)
        async def submitted(ack, body, view, context):
            await ack()
            self.tasks.spawn(self.ask(body, view, context), "pick-ask")

    async def ask(self, body: dict[str, Any], view: dict[str, Any], context: Any) -> None:
        where = json.loads(view.get("private_metadata") or "{}")
        channel, user = where.get("channel", ""), (body.get("user") or {}).get("id", "")
        origin = slack_origin(where.get("team") or context.team_id, channel, user)
        values = ((view.get("state") or {}).get("values") or {}).get("question") or {}
        question = slack_unescape(((values.get("question") or {}).get("value") or "").strip())
        members, chairman = picked_seats(view)
        try:
            await self.questions.council_from_command(
                question, origin, None, context, members=members, chairman=chairman
            )
        except CouncilError as exc:
            await self.people.ephemeral(channel, user, exc.user_message)
