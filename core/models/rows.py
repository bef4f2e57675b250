"""Rows the storage returns: ballots, model statistics, the audit log, daily usage, tenants' keys and spend."""

from __future__ import annotations

from datetime import datetime

from core.models.base import Model


class BallotOrders(Model):
    orders: list[list[str]]  # each stored ballot's model ids, best first
    councils: int  # how many councils they come from


class BallotCounts(Model):
    orders: list[list[str]]  # each distinct stored ballot's model ids, best first
    counts: list[int]  # how often each was cast
    councils: int  # how many councils they come from


class ModelStats(Model):
    model: str
    councils: int = 0  # councils it was a member of
    failures: int = 0  # stage-1 answers that failed
    first_places: int = 0  # councils it won (aggregate position 1)
    mean_average_rank: float | None = None
    average_latency_s: float | None = None
    cost_usd: float | None = None


class AuditEntry(Model):
    at: datetime
    channel_key: str
    actor_id: str
    action: str
    detail: dict


class DailyUsage(Model):
    day: str  # YYYY-MM-DD (UTC)
    councils: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float


class TenantKeyInfo(Model):
    """What may be shown of a tenant's own provider key: never the key, only its last 4 characters."""

    tenant: str  # slack:<team id> or discord:<guild id>
    key_tail: str
    base_url: str | None = None  # None: the default endpoint (OpenRouter)
    members: list[str] | None = None  # None: the operator's line-up
    chairman: str | None = None
    updated_at: datetime
    updated_by: str

    @property
    def masked(self) -> str:
        return f"…{self.key_tail}"


class TenantSpend(Model):
    """A tenant's spend today against its daily budget (None: no budget)."""

    tenant: str
    spent_today_usd: float
    daily_budget_usd: float | None = None


class PurgeCounts(Model):
    """What `council purge` deleted of one tenant."""

    tenant: str
    councils: int = 0
    channel_settings: int = 0
    keys: int = 0
    installations: int = 0
