"""Which provider router a council uses: its tenant's own (key, endpoint) when the tenant set one,
else the operator's. Tenant routers are built once per stored key and share the operator's
connection pool and local models (ProviderRouter.for_endpoint)."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import SecretStr

from core.models import TenantKeyInfo
from core.providers.router import ProviderRouter
from core.shared.redact import Redactor
from core.tenants.keys import TenantStore
from core.tenants.secrets import SecretBox


class TenantRouters:
    def __init__(self, operator: ProviderRouter, store: TenantStore, box: Callable[[], SecretBox]):
        self.operator = operator
        self._store = store
        self._box = box  # ConfigurationError (COUNCIL_SECRET_KEY unset or malformed) when a key is to be read
        self._built: dict[str, tuple[str, ProviderRouter]] = {}  # tenant -> (ciphertext it was built from, router)

    async def for_tenant(self, tenant: str | None) -> tuple[ProviderRouter, TenantKeyInfo | None]:
        """The router for `tenant`'s councils, and the tenant's own key it runs on (None: the
        operator's router). One read of the stored key gives both."""
        if tenant is None:
            return self.operator, None
        found = await self._store.get_key(tenant)
        if found is None:
            self._built.pop(tenant, None)
            return self.operator, None
        info, sealed = found
        built = self._built.get(tenant)
        if built is not None and built[0] == sealed:
            return built[1], info
        key = self._box().decrypt(sealed)
        Redactor.learn(key)
        router = self.operator.for_endpoint(SecretStr(key), info.base_url)
        if built is not None:
            await built[1].aclose()
        self._built[tenant] = (sealed, router)
        return router, info

    async def forget(self, tenant: str) -> None:
        built = self._built.pop(tenant, None)
        if built is not None:
            await built[1].aclose()

    async def aclose(self) -> None:
        for _, router in self._built.values():
            await router.aclose()
        self._built.clear()
