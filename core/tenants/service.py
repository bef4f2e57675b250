"""`service.tenants`: many Slack workspaces and Discord servers on one deployment.

- Slack's OAuth distribution: the installations and OAuth states bolt's OAuth flow keeps here
  (`installations`, `oauth_states`; bot/slack/installations.py gives them slack_sdk's store
  interfaces), and what an uninstall does (`uninstalled`).
- A tenant's own provider key, endpoint and line-up (`set_key`, checked with one models-list call
  before it is saved; `key_info` shows only its last 4 characters), used for that tenant's councils
  only (`plan`), with COUNCIL_REQUIRE_TENANT_KEY refusing tenants without one.
- Per-tenant daily budgets and usage, `purge`, and `rotate_secret` (COUNCIL_SECRET_KEY).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from pydantic import SecretStr

from core.admission.permissions import Permissions
from core.channels.admin import clean_members
from core.errors import BudgetExceeded, ConfigurationError, InputRejected, UnknownModels
from core.models import Actor, DailyUsage, Origin, Platform, PurgeCounts, TenantKeyInfo, TenantSpend, seats
from core.providers.base import ProviderError
from core.providers.router import ProviderRouter
from core.redact import Redactor
from core.settings import Settings
from core.storage import Storage
from core.tenants.installations import InstallationRecords, InstalledCount, OAuthStates
from core.tenants.keys import KEY_TAIL, TenantStore
from core.tenants.routing import TenantRouters
from core.tenants.secrets import SecretBox

log = logging.getLogger(__name__)

MAX_KEY_CHARS = 512
ADD_A_KEY = (
    "This workspace has no provider key of its own yet, and this bot needs one. A workspace admin adds it "
    "in the app's Home tab (Slack: Provider key) or with `/council-admin key` (Discord)."
)


def tenant_of(origin: Origin) -> str | None:
    """`slack:<team>` / `discord:<guild>` of a chat origin; None for the CLI and the API."""
    if origin.platform in (Platform.SLACK, Platform.DISCORD) and origin.workspace_id:
        return f"{origin.platform.value}:{origin.workspace_id}"
    return None


def parse_tenant(text: str) -> str:
    """A tenant id as the CLI takes it: `slack:T1`, `discord:123`, or a bare Slack team (T…) / guild id."""
    text = text.strip()
    platform, _, rest = text.partition(":")
    if rest and platform in ("slack", "discord") and rest.strip():
        return f"{platform}:{rest.strip()}"
    if text.isdigit():
        return f"discord:{text}"
    if text[:1] in ("T", "E") and text.isalnum():
        return f"slack:{text}"
    raise InputRejected(f"`{text}` is not a tenant: give slack:T…, discord:<guild id>, a team id T… or a guild id.")


@dataclass(frozen=True)
class TenantLineup:
    """A tenant's own line-up, set with its provider key: its councils' members and chairman where
    a channel chose none (both None: the operator's defaults)."""

    members: list[str] | None = None
    chairman: str | None = None

    @classmethod
    def of(cls, key: TenantKeyInfo) -> TenantLineup:
        return cls(key.members, key.chairman)


OPERATORS_LINEUP = TenantLineup()


@dataclass(frozen=True)
class TenantPlan:
    """How a tenant's council runs: on its router, with its line-up unless the channel chose one."""

    router: ProviderRouter
    own_key: bool = False
    lineup: TenantLineup = OPERATORS_LINEUP


class Tenants:
    parse = staticmethod(parse_tenant)  # the CLI's tenant argument

    def __init__(self, settings: Settings, storage: Storage, router: ProviderRouter, permissions: Permissions):
        self.settings = settings
        self.store = TenantStore(storage.db)
        self._db = storage.db
        self._permissions = permissions
        # Built on first use: an unset or malformed COUNCIL_SECRET_KEY is reported where a secret
        # is read or written (and by `council doctor`), not by every command that opens the service.
        self._box: SecretBox | None = None
        self.routers = TenantRouters(router, self.store, lambda: self.box)

    @property
    def box(self) -> SecretBox:
        if self._box is None:
            self._box = SecretBox.from_settings(self.settings)  # raises the explanation
        return self._box

    async def check_secret_key(self) -> int:
        """How many stored secrets (tenant keys, Slack installations) COUNCIL_SECRET_KEY opens: all
        of them, else ConfigurationError saying why (unset, malformed, or missing an old key)."""
        box = self.box
        sealed = await self.store.sealed()
        for token in sealed:
            box.decrypt(token)
        return len(sealed)

    async def installed(self) -> InstalledCount:
        """The Slack workspaces and organisations with the app installed (no secret is opened)."""
        return await InstallationRecords.installed(self._db)

    async def aclose(self) -> None:
        await self.routers.aclose()

    # ----------------------------------------------------------------- Slack OAuth distribution

    @property
    def installations(self) -> InstallationRecords:
        """Slack installations on this database (tokens encrypted: needs COUNCIL_SECRET_KEY)."""
        return InstallationRecords(self._db, self.box)

    @property
    def oauth_states(self) -> OAuthStates:
        return OAuthStates(self._db)

    async def uninstalled(self, enterprise_id: str | None, team_id: str | None) -> PurgeCounts | None:
        """The app was uninstalled from a workspace: its tokens are gone already (bolt deletes them);
        with COUNCIL_PURGE_ON_UNINSTALL its councils, keys and settings go too."""
        workspace = team_id or enterprise_id
        if not self.settings.tenants.purge_on_uninstall or not workspace:
            return None
        return await self.purge(f"slack:{workspace}", "slack:app_uninstalled")

    # ----------------------------------------------------------------- a council's plan

    async def plan(self, origin: Origin) -> TenantPlan:
        """The router and line-up of a council asked from `origin`; refuses (InputRejected) a tenant
        without its own key when COUNCIL_REQUIRE_TENANT_KEY is set, and (BudgetExceeded) one whose
        daily budget is spent."""
        tenant = tenant_of(origin)
        router, key = await self.routers.for_tenant(tenant)
        if tenant is None:
            return TenantPlan(router)
        if key is None and self.settings.tenants.require_key:
            raise InputRejected(ADD_A_KEY)
        await self._check_budget(tenant)
        return TenantPlan(router, True, TenantLineup.of(key)) if key is not None else TenantPlan(router)

    async def router_at(self, origin: Origin) -> ProviderRouter:
        """The router a council asked from `origin` calls (its tenant's own key, else the operator's),
        without `plan`'s key requirement and budget: what admin commands check model ids against."""
        router, _ = await self.routers.for_tenant(tenant_of(origin))
        return router

    async def lineup(self, origin: Origin) -> TenantLineup:
        """The line-up the tenant of `origin` set with its own key (its councils run on it): what
        `plan` gives a council, and what the admin views show without building a router."""
        tenant = tenant_of(origin)
        found = await self.store.get_key(tenant) if tenant else None
        return TenantLineup.of(found[0]) if found is not None else OPERATORS_LINEUP

    async def _check_budget(self, tenant: str) -> None:
        spend = await self.spend(tenant)
        if spend.daily_budget_usd and spend.spent_today_usd >= spend.daily_budget_usd:
            day_start = _day_start()
            raise BudgetExceeded(
                f"This workspace's daily budget of ${spend.daily_budget_usd:.2f} is spent "
                f"(${spend.spent_today_usd:.2f} today). It resets at 00:00 UTC.",
                retry_after_s=(day_start + timedelta(days=1) - datetime.now(UTC)).total_seconds(),
            )

    # ----------------------------------------------------------------- keys

    async def key_info(self, origin: Origin) -> TenantKeyInfo | None:
        tenant = tenant_of(origin)
        found = await self.store.get_key(tenant) if tenant else None
        return found[0] if found else None

    async def set_key(
        self,
        actor: Actor,
        origin: Origin,
        api_key: str,
        *,
        base_url: str | None = None,
        members: list[str] | None = None,
        chairman: str | None = None,
    ) -> TenantKeyInfo:
        """Save the tenant's provider key once one models-list call with it succeeds (an admin only).
        A rejected key is not saved: InputRejected carries the provider's reason."""
        self._permissions.require_admin(actor, origin.platform)
        tenant = tenant_of(origin)
        if tenant is None:
            raise InputRejected("A provider key belongs to a Slack workspace or a Discord server.")
        key = api_key.strip()
        if not key or len(key) > MAX_KEY_CHARS or any(c.isspace() for c in key):
            raise InputRejected("Paste the provider key alone: one word, no spaces.")
        Redactor.learn(key)  # from now on, whatever quotes it back is masked
        url = _clean_url(base_url)
        lineup = clean_members(members) if members else None
        chair = seats.clean_seat(chairman) if chairman else None
        box = self.box  # before the call: no check is worth making if the key cannot be stored
        router = self.routers.operator.for_endpoint(SecretStr(key), url)
        try:
            listed = set(await router.endpoint_models())
        except ProviderError as exc:
            raise InputRejected(f"The provider refused this key, so it was not saved: {exc.message}") from None
        finally:
            await router.aclose()
        named = seats.all_models([*(lineup or []), *([chair] if chair else [])])
        unknown = [m for m in named if m not in listed and not m.startswith("local:")]
        if listed and unknown:
            raise UnknownModels(
                f"The key works, but its endpoint does not list {', '.join(unknown)}; nothing was saved.", unknown
            )
        await self.store.put_key(
            tenant,
            box.encrypt(key),
            key[-KEY_TAIL:],
            base_url=url,
            members=lineup,
            chairman=chair,
            actor_id=actor.user_id,
        )
        await self.routers.forget(tenant)
        log.info("tenant %s: provider key …%s saved by %s", tenant, key[-KEY_TAIL:], actor.user_id)
        found = await self.store.get_key(tenant)
        assert found is not None
        return found[0]

    async def remove_key(self, actor: Actor, origin: Origin) -> bool:
        self._permissions.require_admin(actor, origin.platform)
        tenant = tenant_of(origin)
        if tenant is None:
            return False
        await self.routers.forget(tenant)
        return await self.store.delete_key(tenant, actor.user_id)

    # ----------------------------------------------------------------- budgets, usage, purge (operators)

    async def set_budget(self, tenant: str, daily_budget_usd: float | None, actor_id: str = "cli") -> None:
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

    async def purge(self, tenant: str, actor_id: str) -> PurgeCounts:
        """Delete a tenant's councils (votes, files), settings, key, budget and installation; one audit line."""
        counts = await self.store.purge(tenant, actor_id)
        await self.routers.forget(tenant)
        return counts

    async def rotate_secret(self) -> int:
        """Re-encrypt every stored secret under the first key of COUNCIL_SECRET_KEY."""
        box = self.box
        return await self.store.reseal(box.rotate)


def _day_start() -> datetime:
    return datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def _clean_url(url: str | None) -> str | None:
    if not url or not url.strip():
        return None
    url = url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputRejected("The base URL must start with https:// (an OpenAI-compatible endpoint, e.g. …/v1).")
    return url


__all__ = [
    "ADD_A_KEY",
    "OPERATORS_LINEUP",
    "ConfigurationError",
    "TenantLineup",
    "TenantPlan",
    "Tenants",
    "parse_tenant",
    "tenant_of",
]
