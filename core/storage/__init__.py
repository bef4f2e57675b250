"""The council database: SQLite (default) or PostgreSQL behind one facade, `Storage`.

Layout: `database` (the two backends and their SQL dialect bridge), `migrations` (the numbered
schema history for both), and one repository per table group: `councils`, `stats` (leaderboard
reads), `channels` (settings and audit log), `events` (processed event ids), `rate_limits`,
`messages` (the council of each chat message we post).
"""

from core.storage.councils import RUNNING
from core.storage.database import parse_database_url, redact_url
from core.storage.facade import Storage
from core.storage.migrations import MIGRATIONS_DIR, MigrationError, SchemaTooNew, migration_files

__all__ = [
    "MIGRATIONS_DIR",
    "RUNNING",
    "MigrationError",
    "SchemaTooNew",
    "Storage",
    "migration_files",
    "parse_database_url",
    "redact_url",
]
