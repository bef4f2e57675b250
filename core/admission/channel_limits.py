"""A channel's daily budget and the hourly rate limits of its askers, each a channel override when
set, else the global setting. The operator at the terminal (`council ask`) is not rate-limited:
the hourly limits share a bot among chat and API users, and whoever runs the command owns the
deployment; the daily budget, which caps spending, applies to everyone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TypeVar

from core.admission.limits import RateLimiter
from core.errors import BudgetExceeded
from core.models import ChannelSettings, Origin, Platform
from core.settings import Settings
from core.storage import Storage

T = TypeVar("T")


class ChannelLimits:
    def __init__(self, settings: Settings, storage: Storage) -> None:
        self.settings = settings
        self.storage = storage
        self.limiter = RateLimiter(storage)

    async def check(self, origin: Origin, channel: ChannelSettings | None, *, record: bool) -> None:
        """BudgetExceeded or RateLimited with a user-facing message; `record` counts this council
        against the rate limits once it passes."""
        await self.check_budget(origin, channel)
        await self.check_rate(origin, channel, record=record)

    async def check_rate(self, origin: Origin, channel: ChannelSettings | None, *, record: bool) -> None:
        if origin.platform is Platform.CLI:
            return
        await self.limiter.check_and_record(
            user_key=origin.user_key,
            channel_key=origin.channel_key,
            user_limit_per_hour=_pick(
                channel.user_limit_per_hour if channel else None, self.settings.limits.user_limit_per_hour
            ),
            channel_limit_per_hour=_pick(
                channel.channel_limit_per_hour if channel else None, self.settings.limits.channel_limit_per_hour
            ),
            record=record,
        )

    async def check_budget(self, origin: Origin, channel: ChannelSettings | None) -> None:
        budget = _pick(channel.daily_budget_usd if channel else None, self.settings.limits.daily_budget_usd)
        if not budget:
            return
        day_start = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        spent = await self.storage.councils.spent_since(origin.channel_key, day_start)
        if spent >= budget:
            raise BudgetExceeded(
                f"This channel's daily budget of ${budget:.2f} is spent (${spent:.2f} today). "
                "It resets at 00:00 UTC; an admin can raise it with the limits command.",
                retry_after_s=(day_start + timedelta(days=1) - datetime.now(UTC)).total_seconds(),
            )


def _pick(override: T | None, default: T) -> T:
    """A channel override when set (0 is a real value), else the global default."""
    return default if override is None else override
