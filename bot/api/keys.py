"""Bearer keys from COUNCIL_API_KEYS (`name:key,name2:key2`) and the origin an API caller gets."""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field

from pydantic import SecretStr

from core.errors import CouncilError
from core.models import Origin, Platform

# Who asks when no keys are configured (the API then only listens on loopback) or over MCP stdio.
LOCAL_USER = "local"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


@dataclass(frozen=True)
class ApiKeys:
    _names: dict[str, str] = field(default_factory=dict)  # key -> name

    @classmethod
    def parse(cls, secret: SecretStr | None) -> ApiKeys:
        """Raises CouncilError naming the bad entry by position, never by its text (it holds a key)."""
        names: dict[str, str] = {}
        raw = secret.get_secret_value() if secret else ""
        for position, entry in enumerate((part.strip() for part in raw.split(",")), 1):
            if not entry:
                continue
            name, sep, key = (piece.strip() for piece in entry.partition(":"))
            if not sep or not name or not key:
                raise CouncilError(
                    f"COUNCIL_API_KEYS entry {position} is not `name:key` (entries are comma-separated)."
                )
            names[key] = name
        return cls(names)

    @property
    def enabled(self) -> bool:
        return bool(self._names)

    def name_for(self, authorization: str | None) -> str | None:
        """The key's name for an `Authorization: Bearer <key>` header, else None."""
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        offered = token.strip().encode()
        found = None
        for key, name in self._names.items():  # compare with every key: timing tells nothing
            if hmac.compare_digest(key.encode(), offered):
                found = name
        return found


def origin_for(name: str) -> Origin:
    """Each key is its own user and its own "channel", so limits and budgets apply per key."""
    return Origin(platform=Platform.API, channel_id=name, user_id=name, user_name=name)


def check_exposure(keys: ApiKeys, host: str) -> None:
    if not keys.enabled and host not in LOOPBACK_HOSTS:
        raise CouncilError(
            f"Refusing to serve the API on {host} without keys: set COUNCIL_API_KEYS=name:key or bind to 127.0.0.1."
        )
