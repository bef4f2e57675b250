"""A tenant's id: `slack:<team>` or `discord:<guild>`, from a chat origin or as the CLI takes it."""

from __future__ import annotations

from core.errors import InputRejected
from core.models import Origin, Platform


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
