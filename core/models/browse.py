"""Reading councils outside a chat (the browser app): who reads, what they asked to list, a page of it.

A `Viewer` is built by an adapter from what it authenticated (nothing on loopback without keys, a
bearer key, a Slack or Discord sign-in); what a viewer may see is decided by the service's
Permissions (core/channels/permissions.py), never by the adapter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from core.models import Actor, CouncilStatus, CouncilSummary, Origin, Platform

OPERATOR = "operator"  # the user id of the operator on loopback (and of councils they ask there)
WEB_CHANNEL = "web"  # the channel of councils asked in the browser by a signed-in person
HISTORY_PAGE = 25  # councils per page of history


class Viewer(BaseModel):
    """Who reads. `origin` None: the operator, who sees every council (as `council history`).
    Otherwise the platform and workspace (Slack team, Discord guild) they signed in to, and their
    user id (an API key: its own platform-`api` origin, as the API stores its councils)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    origin: Origin | None = None
    is_platform_admin: bool = False  # what the platform said at sign-in (Slack admin, Manage Server)
    name: str = OPERATOR

    @classmethod
    def operator(cls) -> Viewer:
        return cls()

    @classmethod
    def signed_in(
        cls, platform: Platform, workspace_id: str, user_id: str, name: str, *, admin: bool = False
    ) -> Viewer:
        origin = Origin(platform=platform, workspace_id=workspace_id, user_id=user_id, user_name=name)
        return cls(origin=origin, is_platform_admin=admin, name=name)

    @property
    def everything(self) -> bool:
        return self.origin is None

    @property
    def actor(self) -> Actor:
        """As whom they stop a council: the operator owns the database, as an admin does."""
        if self.origin is None:
            return Actor(user_id=OPERATOR, is_platform_admin=True)
        return Actor(user_id=self.origin.user_id or "", is_platform_admin=self.is_platform_admin)

    @property
    def asking_origin(self) -> Origin:
        """Where a council they ask in the browser is stored, limited and budgeted: the operator's
        as a terminal's; a person's in their workspace's `web` channel, under their own user (so
        that their chat limits count it); a key's as the API's."""
        if self.origin is None:
            return Origin(platform=Platform.CLI, channel_id=WEB_CHANNEL, user_id=OPERATOR, user_name=OPERATOR)
        if self.origin.channel_id is not None:  # an API key: its own channel already
            return self.origin
        return self.origin.model_copy(update={"channel_id": WEB_CHANNEL})


@dataclass(frozen=True)
class WebSession:
    """A browser sign-in as stored: who, whether an admin (and when that was last asked), until when."""

    platform: str
    workspace_id: str
    user_id: str
    user_name: str
    admin: bool
    created_at: float
    expires_at: float
    admin_checked_at: float
    revoked_at: float | None = None


@dataclass(frozen=True)
class Visibility:
    """The councils a viewer may list, as storage filters them: None fields match anything.
    Within `platform` and `workspace_id`, a council is seen when `whole_workspace`, or when it was
    asked in `channel_id` or by `user_id` (Permissions.visibility)."""

    platform: str | None = None
    workspace_id: str | None = None
    whole_workspace: bool = True
    channel_id: str | None = None
    user_id: str | None = None


class HistoryQuery(BaseModel):
    """What the history page lists: words to search, filters, and where the page starts."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    q: str | None = None  # words searched in questions and answers (the database's full-text search)
    status: CouncilStatus | None = None
    platform: Platform | None = None
    channel: str | None = None  # a channel id
    model: str | None = None  # a model that answered
    after: str | None = None  # the cursor of the previous page's last council (keyset pagination)
    limit: int = Field(HISTORY_PAGE, ge=1, le=100)


class HistoryItem(CouncilSummary):
    """A council as the history page lists it: its summary, how many model calls it made, the start
    of its final answer and, in a search, where the words were found."""

    calls: int = 0
    preview: str | None = None  # the final answer's first characters (as written: Markdown)
    snippet: str | None = None  # a search's words in their context (question or answer)


class HistoryPage(BaseModel):
    model_config = ConfigDict(defer_build=True)

    councils: list[HistoryItem]
    next: str | None = None  # the cursor of the next page; None: this is the last
    matches: int | None = None  # a search: how many councils match, over every page


class ModelCall(BaseModel):
    """One model call of a council for its timeline: when it started and ended (seconds from the
    council's start, as far as the stored timings tell), what it was, how it went."""

    model_config = ConfigDict(defer_build=True)

    stage: Literal[1, 2, 3]
    model: str
    role: str  # "answer", "review", "synthesis"
    start_s: float
    end_s: float
    ok: bool
    attempts: int = 1  # models tried for the seat (fallbacks) or retries the result recorded
    note: str | None = None


class BallotAgreement(BaseModel):
    """How often two reviewers ranked alike (core/records/agreement.py): over the councils where
    both cast a ballot, the share of answer pairs both ballots put in the same order. Agreement,
    not accuracy: chat history has no right answer to measure against."""

    model_config = ConfigDict(defer_build=True)

    reviewers: list[str]
    agreement: list[list[float | None]]  # agreement[i][j]: None where they never ranked a pair in common
    pairs: list[list[int]]  # pairs[i][j]: the answer pairs both ranked
    councils: list[list[int]]  # councils[i][j]: the councils where both cast a ballot


class HeadToHead(BaseModel):
    """How often each model's answer was ranked above each other's, over the stored ballots, and
    how often two reviewers' ballots agreed."""

    model_config = ConfigDict(defer_build=True)

    models: list[str]  # most wins first
    wins: list[list[int]]  # wins[i][j]: ballots that ranked models[i] above models[j]
    agreement: BallotAgreement | None = None
