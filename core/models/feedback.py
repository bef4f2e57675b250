"""Readers' feedback as adapters send it and read it back: the vote, its comment's limit, the stored vote."""

from __future__ import annotations

from datetime import datetime
from enum import Enum

from pydantic import BaseModel, ConfigDict

COMMENT_MAX_CHARS = 2000


class Vote(str, Enum):
    GOOD = "good"
    BAD = "bad"


class FeedbackVote(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    council_id: str
    user_id: str
    user_name: str | None = None
    vote: Vote
    comment: str | None = None
    created_at: datetime
    updated_at: datetime


class FeedbackEntry(FeedbackVote):
    """A vote with what it was about, for the people who run the bot (`council feedback`)."""

    question: str
    platform: str
    workspace_id: str | None = None
    channel_id: str | None = None
    chairman: str | None = None
