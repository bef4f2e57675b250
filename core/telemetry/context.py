"""What a log line, a metric and a span know about where they are: the council, its platform and
channel, and its stage. Context variables, so that every task a council spawns inherits them (a
model call's task is created with its stage's context, core/engine/runner.py)."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

council_id: ContextVar[str | None] = ContextVar("council_id", default=None)
platform: ContextVar[str | None] = ContextVar("council_platform", default=None)
channel: ContextVar[str | None] = ContextVar("council_channel", default=None)
stage: ContextVar[str | None] = ContextVar("council_stage", default=None)

FIELDS: tuple[tuple[str, ContextVar[str | None]], ...] = (
    ("council_id", council_id),
    ("platform", platform),
    ("channel", channel),
    ("stage", stage),
)


@dataclass(frozen=True)
class Where:
    """A council's place, set once in its own task (core/durable/runs.py) and inherited from there."""

    council_id: str
    platform: str
    channel: str | None

    def enter(self) -> None:
        council_id.set(self.council_id)
        platform.set(self.platform)
        channel.set(self.channel)


def current() -> dict[str, str]:
    """The known fields, for a log line."""
    return {name: value for name, var in FIELDS if (value := var.get()) is not None}
