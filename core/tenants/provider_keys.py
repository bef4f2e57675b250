"""A tenant's own provider key, endpoint and line-up: checked with one models-list call before it is saved."""

from __future__ import annotations

import logging
from collections.abc import Callable
from urllib.parse import urlsplit

from pydantic import SecretStr

from core.channels.admin import clean_members
from core.channels.permissions import Permissions
from core.errors import InputRejected, UnknownModels
from core.models import Actor, Origin, TenantKeyInfo, seats
from core.providers.base import ProviderError
from core.shared.redact import Redactor
from core.tenants.ids import tenant_of
from core.tenants.keys import KEY_TAIL, TenantStore
from core.tenants.routing import TenantRouters
from core.tenants.secrets import SecretBox

log = logging.getLogger(__name__)

MAX_KEY_CHARS = 512


class TenantKeys:
    """`service.tenants.keys`: a workspace's or server's own provider key (set by its admins)."""

    def __init__(
        self, store: TenantStore, routers: TenantRouters, permissions: Permissions, box: Callable[[], SecretBox]
    ):
        self.store = store
        self.routers = routers
        self._permissions = permissions
        self._box = box

    async def info(self, origin: Origin) -> TenantKeyInfo | None:
        tenant = tenant_of(origin)
        found = await self.store.get_key(tenant) if tenant else None
        return found[0] if found else None

    async def save(
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
        box = self._box()  # before the call: no check is worth making if the key cannot be stored
        await self._check_endpoint(key, url, seats.all_models([*(lineup or []), *([chair] if chair else [])]))
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

    async def _check_endpoint(self, key: str, url: str | None, named: list[str]) -> None:
        """One models-list call with `key`: InputRejected when the provider refuses it, UnknownModels
        when its endpoint lists models but not the `named` ones (local models need no endpoint)."""
        router = self.routers.operator.for_endpoint(SecretStr(key), url)
        try:
            listed = set(await router.endpoint_models())
        except ProviderError as exc:
            raise InputRejected(f"The provider refused this key, so it was not saved: {exc.message}") from None
        finally:
            await router.aclose()
        unknown = [m for m in named if m not in listed and not m.startswith("local:")]
        if listed and unknown:
            raise UnknownModels(
                f"The key works, but its endpoint does not list {', '.join(unknown)}; nothing was saved.", unknown
            )

    async def remove(self, actor: Actor, origin: Origin) -> bool:
        self._permissions.require_admin(actor, origin.platform)
        tenant = tenant_of(origin)
        if tenant is None:
            return False
        await self.routers.forget(tenant)
        return await self.store.delete_key(tenant, actor.user_id)


def _clean_url(url: str | None) -> str | None:
    if not url or not url.strip():
        return None
    url = url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputRejected("The base URL must start with https:// (an OpenAI-compatible endpoint, e.g. …/v1).")
    return url
