"""Which provider router a council uses: its tenant's own (key, endpoint) when the tenant set one,
else the operator's. Tenant routers are built once per stored key and share the operator's
connection pool and local models (ProviderRouter.for_endpoint)."""

from __future__ import annotations

from pydantic import SecretStr

from core.providers.router import ProviderRouter
from core.redact import Redactor
from core.tenants.keys import TenantStore
from core.tenants.secrets import SecretBox


class TenantRouters:
    def __init__(self, operator: ProviderRouter, store: TenantStore, box: SecretBox | None):
        self.operator = operator
        self._store = store
        self._box = box
        self._built: dict[str, tuple[str, ProviderRouter]] = {}  # tenant -> (ciphertext it was built from, router)

    async def for_tenant(self, tenant: str | None) -> tuple[ProviderRouter, bool]:
        """The router for `tenant`'s councils, and whether it is the tenant's own."""
        if tenant is None:
            return self.operator, False
        found = await self._store.get_key(tenant)
        if found is None:
            self._built.pop(tenant, None)
            return self.operator, False
        info, sealed = found
        built = self._built.get(tenant)
        if built is not None and built[0] == sealed:
            return built[1], True
        if self._box is None:
            raise RuntimeError("a tenant key is stored but COUNCIL_SECRET_KEY is not set")
        key = self._box.decrypt(sealed)
        Redactor.learn(key)
        router = self.operator.for_endpoint(SecretStr(key), info.base_url)
        if built is not None:
            await built[1].aclose()
        self._built[tenant] = (sealed, router)
        return router, True

    async def forget(self, tenant: str) -> None:
        built = self._built.pop(tenant, None)
        if built is not None:
            await built[1].aclose()

    async def aclose(self) -> None:
        for _, router in self._built.values():
            await router.aclose()
        self._built.clear()
