"""Bearer keys from COUNCIL_API_KEYS (`name:key,name2:key2`) and the origin an API caller gets."""

from __future__ import annotations

import hmac
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from pydantic import SecretStr

from core.errors import CouncilError
from core.models import Origin, Platform

# Who asks when no keys are configured (the API then only listens on loopback) or over MCP stdio.
LOCAL_USER = "local"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


# Open WebUI's forwarded user (ENABLE_FORWARD_USER_INFO_HEADERS=true): the id, then the shown name.
USER_ID_HEADER = "x-openwebui-user-id"
USER_NAME_HEADER = "x-openwebui-user-name"
MAX_END_USER = 128  # characters of an end user's id or name that are kept


@dataclass(frozen=True)
class ApiKeys:
    _names: dict[str, str] = field(default_factory=dict)  # key -> name
    trusted: frozenset[str] = frozenset()  # names of front ends that may name their end user

    @classmethod
    def parse(cls, secret: SecretStr | None, trusted: Sequence[str] = ()) -> ApiKeys:
        """Raises CouncilError naming the bad entry by position, never by its text (it holds a key).
        `trusted`: COUNCIL_API_TRUSTED_KEYS, names that COUNCIL_API_KEYS must have."""
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
        unknown = sorted(set(trusted) - set(names.values()))
        if unknown:
            known = ", ".join(sorted(set(names.values()))) or "none"
            raise CouncilError(
                f"COUNCIL_API_TRUSTED_KEYS names {', '.join(unknown)}, not a key name of COUNCIL_API_KEYS ({known})."
            )
        return cls(names, frozenset(trusted))

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


def caller_origin(
    keys: ApiKeys, name: str, headers: Mapping[str, str], user: str | Mapping[str, Any] | None = None
) -> Origin:
    """Who asks. A trusted front end (one key serving many people) may name its end user, by the
    request's `user` or Open WebUI's forwarded user headers: that user then has their own limits
    and history, under the key's channel. Any other key's naming is ignored: it would let a
    caller spend under someone else's name or shed its own limits."""
    origin = origin_for(name)
    if name not in keys.trusted:
        return origin
    named = user if isinstance(user, Mapping) else {"id": user}
    end_user = _clean(headers.get(USER_ID_HEADER)) or _clean(named.get("id"))
    if end_user is None:
        return origin
    # Open WebUI percent-encodes the name it forwards (`quote(name, safe=" ")`).
    shown = _clean(unquote(headers.get(USER_NAME_HEADER, ""))) or _clean(named.get("name")) or end_user
    return origin.model_copy(update={"user_id": f"{name}/{end_user}", "user_name": shown})


def _clean(value: Any) -> str | None:
    text = " ".join(str(value or "").split())[:MAX_END_USER]
    return text or None


def check_exposure(keys: ApiKeys, host: str) -> None:
    if not keys.enabled and host not in LOOPBACK_HOSTS:
        raise CouncilError(
            f"Refusing to serve the API on {host} without keys: set COUNCIL_API_KEYS=name:key or bind to 127.0.0.1."
        )
