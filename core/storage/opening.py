"""Opening the configured database, with one clear line naming DATABASE_URL when it cannot be opened."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from core.database_url import SQLITE
from core.errors import ConfigurationError
from core.settings import Settings
from core.storage.database import DatabaseUnavailable
from core.storage.facade import Storage


async def open_configured_storage(settings: Settings) -> Storage:
    """The database, or ConfigurationError naming DATABASE_URL and where it points when it cannot be opened."""
    target = settings.storage.database
    try:
        if target.dialect == SQLITE:
            # Probed synchronously first: a failed aiosqlite connect leaves its worker thread to die noisily.
            await asyncio.to_thread(_probe_sqlite, target.location)
        return await Storage.open(settings.storage.database_url)
    except (OSError, sqlite3.Error) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigurationError(
            f"DATABASE_URL: cannot open the database {target.display} ({reason}). "
            "Point DATABASE_URL at a writable file, e.g. sqlite:////absolute/path/council.db."
        ) from exc
    except DatabaseUnavailable as exc:
        raise ConfigurationError(f"DATABASE_URL: {exc}.") from None


def _probe_sqlite(path: str) -> None:
    if path == ":memory:":
        return
    Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
    sqlite3.connect(Path(path).expanduser()).close()
