"""What a group of Bolt listeners (the Home tab, readers' feedback) works with."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from slack_bolt.async_app import AsyncApp
    from slack_sdk.web.async_client import AsyncWebClient

    from bot.slack.people import SlackPeople
    from bot.slack.tasks import BackgroundTasks
    from core.service import CouncilService


class ListenerGroup:
    """Registers its listeners on `app` (`register`); slow work goes to `tasks` so that Slack gets
    its acknowledgement within three seconds."""

    def __init__(
        self,
        app: AsyncApp,
        client: AsyncWebClient,
        service: CouncilService,
        tasks: BackgroundTasks,
        people: SlackPeople,
    ):
        self.app = app
        self.client = client
        self.service = service
        self.tasks = tasks
        self.people = people
