"""Stored councils read without the service, for a command that only lists them (`council
history`), which should answer at once. `CouncilService` (core/service/council.py) builds every collaborator
and imports what councils need to run; this opens the database and its queries alone, as the
operator (`Permissions` with no viewer: every council), and writes nothing (no retention pass)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from core.channels.permissions import Permissions
from core.records.queries import CouncilQueries
from core.settings import Settings
from core.storage.opening import open_configured_storage

__all__ = ["open_queries"]


@asynccontextmanager
async def open_queries(settings: Settings) -> AsyncIterator[CouncilQueries]:
    """The configured database's councils, closed on the way out (ConfigurationError as the service's
    `open` raises it when the database cannot be opened)."""
    storage = await open_configured_storage(settings)
    try:
        yield CouncilQueries(storage, Permissions(settings.limits.admin_users))
    finally:
        await storage.close()
