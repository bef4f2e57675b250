"""What durable councils store and pass between processes (core/durable): checkpoints, destinations, jobs."""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field

from core.models.base import Model
from core.models.deliberation import Revision
from core.models.requests import CouncilRequest, Platform
from core.models.stages import MemberAnswer, Review


class CouncilCheckpoint(Model):
    """What a council had completed when its process stopped: stage-1 answers (failed ones too:
    the stage had settled them) and stage-2 reviews, in the order they arrived. The engine
    resumes from it without calling those models again."""

    answers: list[MemberAnswer] = Field(default_factory=list)
    reviews: list[Review] = Field(default_factory=list)
    revisions: list[Revision] = Field(default_factory=list)  # refine mode's rounds, each revision a step

    @property
    def empty(self) -> bool:
        return not self.answers and not self.reviews and not self.revisions


class Destination(BaseModel):
    """Where a council is shown: everything a runner needs to write there, as plain ids. Stored
    with a durable council's job, so that any worker can post into the original thread."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    platform: Platform
    channel_id: str  # where the answer goes: a Slack channel, a Discord thread (or channel)
    thread_id: str | None = None  # Slack: the thread's ts (Discord threads are channels)
    status_id: str | None = None  # the status message, once posted (Slack ts, Discord message id)
    status_channel_id: str | None = None  # its channel when not `channel_id` (a /council starter message)
    # Slack Enterprise Grid: the organisation, and whether the app is installed org-wide there (its
    # installation is then the organisation's and posts for every workspace of it): with the
    # origin's team, what a worker needs to find the installation whose token writes here.
    enterprise_id: str | None = None
    is_enterprise_install: bool = False

    @property
    def status_channel(self) -> str:
        return self.status_channel_id or self.channel_id

    def with_status(self, status_id: str) -> Destination:
        return self.model_copy(update={"status_id": status_id})


class ControlAction(str, Enum):
    STOP = "stop"
    SYNTHESIZE = "synthesize"


class CouncilJob(Model):
    """A council that can run on any worker (and resume there): council_jobs in the database."""

    request: CouncilRequest
    destination: Destination | None = None
    search: bool = False  # search the web before stage 1
    prepared: bool = False  # files and search read before stage 1 (then kept in `request`)
    control: ControlAction | None = None  # a Stop / Synthesize now that arrived for it
    attempts: int = 0  # how many workers have taken it (more than 1: resumed)
