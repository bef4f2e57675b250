"""A tenant's daily budget and spend (COUNCIL_TENANT_DAILY_BUDGET_USD, `council budget`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.errors import BudgetExceeded, InputRejected
from core.models import DailyUsage, Origin, TenantSpend
from core.settings import Settings
from core.telemetry import metrics
from core.tenants.ids import tenant_of
from core.tenants.keys import TenantStore


class TenantBudgets:
    """`service.tenants.budgets`: what each workspace or server may spend a day, and has spent."""

    def __init__(self, settings: Settings, store: TenantStore):
        self.settings = settings
        self.store = store

    async def check(self, tenant: str) -> None:
        """BudgetExceeded when the tenant's daily budget is spent."""
        spend = await self.spend(tenant)
        if spend.daily_budget_usd:  # alerted on near its end (deploy/prometheus/alerts.yml)
            metrics.TENANT_BUDGET_USED.labels(tenant).set(spend.spent_today_usd / spend.daily_budget_usd)
        if spend.daily_budget_usd and spend.spent_today_usd >= spend.daily_budget_usd:
            day_start = _day_start()
            raise BudgetExceeded(
                f"This workspace's daily budget of ${spend.daily_budget_usd:.2f} is spent "
                f"(${spend.spent_today_usd:.2f} today). It resets at 00:00 UTC.",
                retry_after_s=(day_start + timedelta(days=1) - datetime.now(UTC)).total_seconds(),
            )

    async def set(self, tenant: str, daily_budget_usd: float | None, actor_id: str = "cli") -> None:
        if daily_budget_usd is not None and daily_budget_usd < 0:
            raise InputRejected("A budget is a number of USD, 0 or more.")
        await self.store.set_budget(tenant, daily_budget_usd, actor_id)

    async def spend(self, tenant: str) -> TenantSpend:
        budget = await self.store.budget(tenant)
        if budget is None:
            budget = self.settings.tenants.daily_budget_usd
        return TenantSpend(
            tenant=tenant,
            spent_today_usd=await self.store.spent_since(tenant, _day_start()),
            daily_budget_usd=budget,
        )

    async def spend_for(self, origin: Origin) -> TenantSpend | None:
        """The spend today of the workspace or server `origin` is in (None outside one)."""
        tenant = tenant_of(origin)
        return await self.spend(tenant) if tenant else None

    async def usage(self, tenant: str, days: int = 30) -> list[DailyUsage]:
        return await self.store.usage_by_day(tenant, datetime.now(UTC) - timedelta(days=days))


def _day_start() -> datetime:
    return datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
