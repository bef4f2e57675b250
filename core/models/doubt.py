"""Doubt that was measured: the consensus scale a council's doubt is read on, and the measured
threshold a council carries from its line-up's last eval run (or `COUNCIL_UNSURE_BELOW`).

The consensus scale is 0-100: the rubric consensus when the reviews gave scores, else Kendall's
W of the ballots × 100. A threshold is a number on it from 0 (never unsure) to 101 (always).
"""

from __future__ import annotations

import re
from typing import Protocol

from pydantic import BaseModel, ConfigDict


class Figures(Protocol):
    """What a council's doubt is read from (core/models/stages.py's Aggregate)."""

    @property
    def consensus(self) -> float | None: ...

    @property
    def agreement_w(self) -> float | None: ...


NEVER = 0
ALWAYS = 101

# Who a channel mentions when an answer there is unsure, platform-free: `group:S0123` (a Slack
# user group), `user:U0123` (a Slack or Discord user), `role:1234` (a Discord role). Each adapter
# reads its own mention syntax into this form and writes it back as a mention.
MENTION_KINDS = ("group", "user", "role")
_MENTION = re.compile(r"^(group|user|role):([A-Za-z0-9]{1,40})$")


def mention_target(kind: str, ident: str) -> str:
    """`kind:id`, or ValueError (one line) for anything else."""
    target = f"{kind}:{ident}"
    if not _MENTION.match(target):
        raise ValueError("Name a user group, a user or a role to mention (or `off`).")
    return target


def split_mention(target: str) -> tuple[str, str]:
    kind, _, ident = target.partition(":")
    return kind, ident


def consensus_scale(consensus: float | None, agreement_w: float | None) -> tuple[float, str] | None:
    """(value 0-100, "rubric" or "kendall_w") of a council, None without either figure."""
    if consensus is not None:
        return consensus, "rubric"
    if agreement_w is not None:
        return agreement_w * 100, "kendall_w"
    return None


def aggregate_scale(aggregate: Figures | None) -> tuple[float, str] | None:
    return consensus_scale(aggregate.consensus, aggregate.agreement_w) if aggregate is not None else None


class UnsureThreshold(BaseModel):
    """Below `below` on the consensus scale a council is unsure. From an eval run (`run` names it,
    `accuracy` is how often the council was right under it there), else the setting (`run` None)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    below: int
    run: str | None = None
    accuracy: float | None = None
    items: int = 0


class Unsure(BaseModel):
    """A result whose consensus fell under its threshold: shown first, in one line, everywhere."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    consensus: float  # this council's, on the consensus scale
    measure: str  # "rubric" or "kendall_w"
    threshold: UnsureThreshold


def judge(aggregate: Figures | None, threshold: UnsureThreshold | None) -> Unsure | None:
    """The council is unsure when its consensus is under the threshold (0: never). Without a
    consensus figure (no reviews, as in quick mode) only COUNCIL_UNSURE_BELOW's 101 (always) says
    so: an eval run measured councils that had one."""
    if threshold is None or threshold.below <= NEVER:
        return None
    scale = aggregate_scale(aggregate)
    if scale is None:
        always = threshold.below >= ALWAYS and threshold.run is None
        return Unsure(consensus=0.0, measure="none", threshold=threshold) if always else None
    value, measure = scale
    return Unsure(consensus=value, measure=measure, threshold=threshold) if value < threshold.below else None
