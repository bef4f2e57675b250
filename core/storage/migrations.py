"""Numbered migrations from `migrations/`, one schema history for SQLite and PostgreSQL.

`migrations/NNNN_name.sql` files are applied in order at start-up (in the style of simonw/llm's
numbered migrations), each in one transaction together with its `schema_version` row, so a failed
file leaves nothing behind and two processes opening a fresh database at once apply each file
exactly once (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: an advisory lock, DDL being transactional).
A database whose schema is newer than the newest file this code ships is refused
(`SchemaTooNew`) rather than misread.

Dialects: a file is shared by both backends unless `migrations/postgresql/NNNN_name.sql` exists,
which then replaces it on PostgreSQL (same number and name: the history stays one). Variants exist
where SQLite's types or tricks do not carry over (REAL is 4 bytes on PostgreSQL, `rowid`, and
AUTOINCREMENT); tests/test_storage.py checks that both dialects end with the same tables and columns.

A file may have a step in Python, for what SQL cannot express (core/storage/data_migrations.py):
it runs after the file's statements, in the same transaction.
"""

from __future__ import annotations

import re
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import core
from core.storage import data_migrations
from core.storage.database import POSTGRESQL, Database, Transaction

# Beside `core/` both in the repository and in the installed wheel (pyproject includes migrations/**.sql).
MIGRATIONS_DIR = Path(core.__file__).resolve().parent.parent / "migrations"
_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_SQL_NOISE = re.compile(r"--[^\n]*|/\*.*?\*/|[\s;]", re.S)  # comments, blanks, empty statements
_LOCK_KEY = "council:migrations"  # advisory lock of the migration runner (PostgreSQL)


class SchemaTooNew(RuntimeError):
    """The database was written by a newer version of the bot; refuse to touch it."""


class MigrationError(RuntimeError):
    """A migration file is malformed or failed; the database is left at the previous version."""


def migration_files(migrations_dir: Path = MIGRATIONS_DIR, dialect: str = "sqlite") -> list[tuple[int, str, Path]]:
    """(version, name, path) of every `NNNN_name.sql`, in order, with the dialect's variants in
    place of the shared files; duplicates are an error."""
    found = _scan(migrations_dir)
    if not found:
        raise MigrationError(f"no migrations found in {migrations_dir}")
    variants_dir = migrations_dir / dialect
    if dialect == POSTGRESQL and variants_dir.is_dir():
        for version, entry in _scan(variants_dir).items():
            if version not in found or found[version][1] != entry[1]:
                raise MigrationError(f"{entry[2]}: a dialect variant must replace a shared file of the same name")
            found[version] = entry
    return [found[v] for v in sorted(found)]


def _scan(directory: Path) -> dict[int, tuple[int, str, Path]]:
    found: dict[int, tuple[int, str, Path]] = {}
    for path in sorted(directory.glob("*.sql")):
        match = _MIGRATION_NAME.match(path.name)
        if not match:
            raise MigrationError(f"{path}: migration files must be named NNNN_name.sql (lower case)")
        version = int(match.group(1))
        if version in found:
            raise MigrationError(f"two migrations share version {version}: {found[version][2].name} and {path.name}")
        found[version] = (version, match.group(2), path)
    return found


def split_statements(script: str) -> list[str]:
    """Split a SQL script into complete statements (triggers' inner `;` and comments respected)."""
    statements, buffer = [], ""
    for piece in script.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    # What is left is unterminated (open quote or trigger): keep it, so that the database reports
    # the error instead of the text being silently dropped. The last piece got a `;` it never had.
    statements.append(buffer[:-1].strip())
    return [s for s in statements if _SQL_NOISE.sub("", s)]


async def schema_version(db: Database) -> int:
    rows = await db.fetchall("SELECT COALESCE(MAX(version), 0) FROM schema_version")
    return int(rows[0][0])


async def migrate(db: Database, migrations_dir: Path = MIGRATIONS_DIR) -> None:
    """Apply every pending migration, each in its own transaction."""
    files = migration_files(migrations_dir, db.dialect)
    known = files[-1][0]
    async with db.transaction() as tx:  # under the lock: two fresh starts must not race on CREATE
        await tx.lock(_LOCK_KEY)
        await tx.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
    _refuse_if_too_new(db, await schema_version(db), known)
    # By version applied, not by the highest one: branches take the numbers they are given and may
    # land out of order, so a database at version 10 can still lack version 8.
    applied = await _applied(db)
    for version, name, path in files:
        if version not in applied:
            statements = split_statements(path.read_text(encoding="utf-8"))
            await _apply(db, version, name, path.name, statements, known=known)


async def _apply(db: Database, version: int, name: str, file_name: str, statements: list[str], *, known: int) -> None:
    """One migration in its own transaction, unless another process applied it meanwhile; `known`
    is the newest version this code knows."""
    current = version - 1
    try:
        async with db.transaction() as tx:
            await tx.lock(_LOCK_KEY)
            # Re-read under the lock: another process may have applied it while we waited.
            current = int((await tx.fetchall("SELECT COALESCE(MAX(version), 0) FROM schema_version"))[0][0])
            _refuse_if_too_new(db, current, known)
            if version in await _applied(tx):
                return
            for statement in statements:
                await tx.execute(statement)
            if (step := data_migrations.STEPS.get(name)) is not None:  # what SQL cannot express
                await step(tx)
            await tx.execute(
                "INSERT INTO schema_version (version, name, applied_at) VALUES (:version, :name, :at)",
                {"version": version, "name": name, "at": datetime.now(UTC).isoformat(timespec="microseconds")},
            )
    except SchemaTooNew:
        raise
    except Exception as exc:
        if not _is_database_error(exc):
            raise
        raise MigrationError(
            f"migration {file_name} failed and was rolled back ({exc}); the database {db.display} "
            f"stays at schema version {current}"
        ) from exc


async def _applied(db: Database | Transaction) -> set[int]:
    return {int(row[0]) for row in await db.fetchall("SELECT version FROM schema_version")}


def _is_database_error(exc: Exception) -> bool:
    if isinstance(exc, sqlite3.Error):
        return True
    try:
        import psycopg
    except ImportError:
        return False
    return isinstance(exc, psycopg.Error)


def _refuse_if_too_new(db: Database, current: int, known: int) -> None:
    if current > known:
        raise SchemaTooNew(
            f"the database {db.display} has schema version {current}, but this version of the bot "
            f"only knows up to {known}: upgrade the bot (or point DATABASE_URL elsewhere)"
        )
