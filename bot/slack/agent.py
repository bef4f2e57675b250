"""Slack's agent experience (`features.agent_view`): the app's Messages tab.

Under agent_view a person's message in the Messages tab arrives as a top-level DM message and
starts a conversation of its own (its `ts` is the thread); replies in that thread continue it.
`SlackQuestions.handle_message` (bot/slack/questions.py) already runs a council per top-level
DM in that message's thread and reads the thread as history for a reply. This module adds what an agent shows around it:

- `app_home_opened` on the Messages tab: suggested prompts (`assistant.threads.setSuggestedPrompts`
  through Bolt's `set_suggested_prompts`; SLACK_SUGGESTED_PROMPTS or the defaults below);
- `app_context_changed` (what the person is looking at changed): the prompts are set again, with
  one about the channel they are viewing when there is one;
- while a council runs in a DM: the thread's title from the question (`assistant.threads.setTitle`)
  and a status line with loading messages that follow the stages (`assistant.threads.setStatus`,
  through Bolt's `AsyncSetStatus`), cleared when the answer is there.

Status and title are a courtesy: a refusal (an app without agent_view, an old workspace) is
logged once per council and the council carries on.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from slack_bolt.context.set_status.async_set_status import AsyncSetStatus
from slack_bolt.context.set_suggested_prompts.async_set_suggested_prompts import AsyncSetSuggestedPrompts

from bot.slack.errors import refusal
from core.models import (
    AggregateReady,
    AgreementStarted,
    ChairmanToken,
    CouncilEvent,
    CouncilFinished,
    CouncilQueued,
    CouncilStarted,
    MemberFinished,
    ReviewFinished,
    StageStarted,
)
from core.models.voice import judging_line

if TYPE_CHECKING:
    from slack_bolt.async_app import AsyncApp
    from slack_sdk.web.async_client import AsyncWebClient

    from bot.slack.tasks import BackgroundTasks
    from core.service import CouncilRun

log = logging.getLogger(__name__)

PROMPTS_TITLE = "Ask the council — several models answer, review each other, and a chairman sums up:"
TITLE_MAX = 60
PROMPT_TITLE_MAX = 75
DEFAULT_PROMPTS: list[dict[str, str]] = [
    {
        "title": "Compare two approaches to…",
        "message": "Compare two approaches to caching in a web service: which would you choose, and why?",
    },
    {
        "title": "Stress-test a decision",
        "message": "What are the strongest arguments for and against rewriting a legacy service from scratch?",
    },
    {
        "title": "Explain a hard concept",
        "message": "Explain the CAP theorem with a practical example, and where people usually get it wrong.",
    },
    {"title": "How does the council work?", "message": "help"},
]

# (status, loading messages) per stage; Slack shows "<app> <status>" and rotates the messages.
STAGE_STATUS: dict[str, tuple[str, list[str]]] = {
    "queued": ("is waiting for a free slot…", ["Waiting in the queue…"]),
    "answers": ("is thinking…", ["Asking every council member…", "Members are answering independently…"]),
    "reviews": ("is reviewing…", ["Members review each other's answers anonymously…", "Reading the ballots…"]),
    "ranking": ("is ranking…", ["Counting the votes…"]),
    "agreement": ("is comparing…", [f"{judging_line('The chairman')}…"]),
    "chairman": ("is writing…", ["The chairman is writing the final answer…"]),
}


def suggested_prompts(configured: list[str]) -> list[dict[str, str]]:
    """SLACK_SUGGESTED_PROMPTS ("Title | message", or a message that is its own title), else the defaults."""
    prompts = []
    for entry in configured:
        title, sep, message = entry.partition("|")
        title, message = title.strip(), message.strip()
        if not sep or not message:
            title, message = entry.strip(), entry.strip()
        if len(title) > PROMPT_TITLE_MAX:
            title = title[: PROMPT_TITLE_MAX - 1] + "…"
        prompts.append({"title": title, "message": message})
    return prompts[:4] or [dict(p) for p in DEFAULT_PROMPTS]  # Slack shows at most four


def thread_title(question: str) -> str:
    flat = " ".join(question.split())
    return flat if len(flat) <= TITLE_MAX else flat[: TITLE_MAX - 1].rstrip() + "…"


def stage_of(event: CouncilEvent) -> str | None:
    """Which status a council event moves the status line to (None: no change)."""
    if isinstance(event, CouncilQueued):
        return "queued"
    if isinstance(event, CouncilStarted | MemberFinished):
        return "answers"
    if isinstance(event, StageStarted):
        return {1: "answers", 2: "reviews", 3: "chairman"}[event.stage]
    if isinstance(event, ReviewFinished):  # one that came after the synthesis began moves nothing back
        return None if event.review.late else "reviews"
    if isinstance(event, AgreementStarted):
        return "agreement"
    if isinstance(event, AggregateReady):
        return "ranking"
    if isinstance(event, ChairmanToken):
        return "chairman"
    return None


def viewed_channel(context: dict[str, Any] | None) -> str | None:
    """The channel an `app_context_changed` event says the person is looking at, if any."""
    for entity in (context or {}).get("entities") or []:
        if entity.get("type") == "slack#/types/channel_id" and entity.get("value"):
            return str(entity["value"])
    return None


class SlackAgent:
    """The Messages-tab listeners and the status line of DM councils."""

    def __init__(self, app: AsyncApp, client: AsyncWebClient, tasks: BackgroundTasks, prompts: list[str]):
        """`prompts`: SLACK_SUGGESTED_PROMPTS (see `suggested_prompts`)."""
        self.app = app
        self.client = client
        self.tasks = tasks
        self.prompts = suggested_prompts(prompts)

    def register(self, on_home_tab: Any = None) -> None:
        """`on_home_tab(event, context)` handles the Home tab's `app_home_opened` (bot/slack/home.py)."""
        app = self.app

        @app.event("app_home_opened")
        async def app_home_opened(event, context, set_suggested_prompts=None):
            if event.get("tab") == "home":
                if on_home_tab is not None:
                    self.tasks.spawn(on_home_tab(event, context), "home")
                return
            self.tasks.spawn(self.offer_prompts(event, set_suggested_prompts), "suggested-prompts")

        @app.event("app_context_changed")
        async def app_context_changed(event, set_suggested_prompts=None):
            self.tasks.spawn(self.offer_prompts(event, set_suggested_prompts), "context-changed")

    async def offer_prompts(self, event: dict[str, Any], set_prompts: AsyncSetSuggestedPrompts | None) -> None:
        channel = event.get("channel")
        if set_prompts is None:
            if not channel:
                return
            set_prompts = AsyncSetSuggestedPrompts(self.client, channel)
        prompts = list(self.prompts)
        viewing = viewed_channel(event.get("context"))
        if viewing:
            prompts = [
                {"title": "This channel's council", "message": f"What can the council do in <#{viewing}>?"},
                *prompts,
            ][:4]
        try:
            await set_prompts(prompts, title=PROMPTS_TITLE)
        except Exception as exc:
            log.info("could not set suggested prompts: %s", refusal(exc))

    def follow(self, run: CouncilRun, channel: str, thread_ts: str) -> None:
        """In a DM: title the thread and keep its status line on the council's stage."""
        if channel.startswith("D"):  # Slack's DM channel ids; channels and group DMs have no status line
            self.tasks.spawn(self.show_status(run, channel, thread_ts), f"status-{run.council_id}")

    async def show_status(self, run: CouncilRun, channel: str, thread_ts: str) -> None:
        client = self.client
        try:
            await client.assistant_threads_setTitle(
                channel_id=channel, thread_ts=thread_ts, title=thread_title(run.request.question)
            )
        except Exception as exc:
            log.info("could not title the thread of council %s: %s", run.council_id, refusal(exc))
        set_status = AsyncSetStatus(client, channel, thread_ts)
        shown: str | None = None
        working = True
        async for event in run.events():
            if isinstance(event, CouncilFinished):
                break
            stage = stage_of(event)
            if not working or stage is None or stage == shown:
                continue
            status, loading = STAGE_STATUS[stage]
            try:
                await set_status(status=status, loading_messages=loading)
                shown = stage
            except Exception as exc:
                working = False  # no status line in this workspace: stop asking for this council
                log.info("no status line for council %s: %s", run.council_id, refusal(exc))
        if working and shown is not None:
            try:
                await set_status(status="")  # the answer is there
            except Exception as exc:
                log.info("could not clear the status of council %s: %s", run.council_id, refusal(exc))
