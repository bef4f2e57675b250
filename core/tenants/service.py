"""`service.tenants`: many Slack workspaces and Discord servers on one deployment.

- Slack's OAuth distribution: the installations and OAuth states bolt's OAuth flow keeps here
  (`installations`, `oauth_states`; bot/slack/installations.py gives them slack_sdk's store
  interfaces), and what an uninstall does (`uninstalled`).
- A tenant's own provider key, endpoint and line-up (`keys`, core/tenants/provider_keys.py: `save`
  checks it with one models-list call before it is saved; `info` shows only its last 4 characters),
  used for that tenant's councils only (`plan`), with COUNCIL_REQUIRE_TENANT_KEY refusing tenants
  without one.
- Per-tenant daily budgets and usage (`budgets`, core/tenants/budgets.py), `purge`, and
  `rotate_secret` (COUNCIL_SECRET_KEY).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from core.channels.permissions import Permissions
from core.errors import ConfigurationError, InputRejected
from core.models import Origin, PurgeCounts, TenantKeyInfo
from core.providers.router import ProviderRouter
from core.settings import Settings
from core.storage import Storage
from core.tenants.budgets import TenantBudgets
from core.tenants.ids import parse_tenant, tenant_of
from core.tenants.installations import InstallationRecords, InstalledCount, OAuthStates
from core.tenants.keys import TenantStore
from core.tenants.provider_keys import TenantKeys
from core.tenants.routing import TenantRouters
from core.tenants.secrets import SecretBox

log = logging.getLogger(__name__)

MAX_KEY_CHARS = 512
ADD_A_KEY = (
    "This workspace has no provider key of its own yet, and this bot needs one. A workspace admin adds it "
    "in the app's Home tab (Slack: Provider key) or with `/council-admin key` (Discord)."
)


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
        self.keys = TenantKeys(self.store, self.routers, permissions, lambda: self.box)
        self.budgets = TenantBudgets(settings, self.store)

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
        await self.budgets.check(tenant)
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

    # ----------------------------------------------------------------- keys

    # ----------------------------------------------------------------- budgets, usage, purge (operators)

    async def purge(self, tenant: str, actor_id: str) -> PurgeCounts:
        """Delete a tenant's councils (votes, files), settings, key, budget and installation; one audit line."""
        counts = await self.store.purge(tenant, actor_id)
        await self.routers.forget(tenant)
        return counts

    async def rotate_secret(self) -> int:
        """Re-encrypt every stored secret under the first key of COUNCIL_SECRET_KEY."""
        box = self.box
        return await self.store.reseal(box.rotate)


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
