"""The two database backends behind one small interface: SQLite (aiosqlite, WAL) and PostgreSQL
(psycopg 3 with a psycopg_pool connection pool).

SQL is written once, in the dialect both understand, with `?` (positional) or `:name` (named)
parameters; for PostgreSQL they are rewritten to psycopg's `%s` / `%(name)s` once per statement
text. Where the dialects really differ the repositories ask `db.dialect`.

Transactions: `async with db.transaction() as tx` is one transaction that other processes see
whole or not at all. On SQLite it starts with `BEGIN IMMEDIATE` (the file's single write lock, so
a read-then-write inside cannot go stale against another process) under this connection's asyncio
lock; on PostgreSQL it runs on one pooled connection, and `tx.lock(key)` takes a transaction-scoped
advisory lock, which is how read-then-write rules (rate limits) stay correct across replicas.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

import aiosqlite

from core.database_url import POSTGRESQL, SQLITE, DatabaseTarget, parse_database_url, redact_url
from core.storage.reachable import check_reachable
from core.storage.reconnect import DatabaseUnavailable, retrying

WAIT_S = 30.0  # DATABASE_WAIT_S's default: how long an operation waits for the database
_POOL_MAX = 10
T = TypeVar("T")

Params = Sequence[Any] | Mapping[str, Any]
__all__ = ["POSTGRESQL", "SQLITE", "Database", "DatabaseUnavailable", "parse_database_url", "redact_url"]


class Row(Protocol):
    """A result row, by position (`row[0]`) or by column name (`row["id"]`)."""

    def __getitem__(self, key: int | str) -> Any: ...


@lru_cache(maxsize=512)
def to_pyformat(sql: str) -> str:
    """`?` → `%s`, `:name` → `%(name)s`, `%` → `%%`, outside quoted literals (psycopg's style)."""
    pieces = re.split(r"('(?:[^']|'')*')", sql)
    for i in range(0, len(pieces), 2):
        piece = pieces[i].replace("%", "%%").replace("?", "%s")
        pieces[i] = re.sub(r"(?<![:\w]):([A-Za-z_]\w*)", r"%(\1)s", piece)
    return "".join(pieces)


class Transaction(Protocol):
    async def execute(self, sql: str, params: Params = ()) -> int: ...
    async def executemany(self, sql: str, rows: Iterable[Params]) -> None: ...
    async def fetchall(self, sql: str, params: Params = ()) -> list[Any]: ...
    async def lock(self, key: str) -> None: ...


class Database(Protocol):
    dialect: str
    display: str

    async def execute(self, sql: str, params: Params = ()) -> int: ...
    async def fetchall(self, sql: str, params: Params = ()) -> list[Any]: ...
    def transaction(self) -> Any: ...  # async context manager yielding a Transaction
    async def script(self, sql: str) -> None: ...
    async def retrying(self, op: Callable[[], Awaitable[T]]) -> T: ...
    async def close(self) -> None: ...


async def open_database(url: str, wait_s: float = WAIT_S) -> Database:
    """`wait_s`: how long an operation waits for the database (SQLite: another process's write
    lock; PostgreSQL: a lost connection, retried with backoff, see core/storage/reconnect.py)."""
    target = parse_database_url(url)
    if target.dialect == POSTGRESQL:
        return await PostgresDatabase.connect(target, wait_s=wait_s)
    return await SqliteDatabase.connect(target, wait_s=wait_s)


# --------------------------------------------------------------------------- SQLite


class _SqliteTx:
    def __init__(self, conn: aiosqlite.Connection):
        self._conn = conn

    async def execute(self, sql: str, params: Params = ()) -> int:
        cursor = await self._conn.execute(sql, params)
        return cursor.rowcount

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        await self._conn.executemany(sql, rows)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Any]:
        async with self._conn.execute(sql, params) as cursor:
            return list(await cursor.fetchall())

    async def lock(self, key: str) -> None:
        """Nothing to do: BEGIN IMMEDIATE already holds the file's only write lock."""


class SqliteDatabase:
    """One aiosqlite connection; every operation (reads too) holds one asyncio lock, so a reader
    never observes another task's half-written transaction on the shared connection."""

    dialect = SQLITE

    def __init__(self, conn: aiosqlite.Connection, target: DatabaseTarget):
        self._conn = conn
        self._lock = asyncio.Lock()
        self.path = target.location
        self.display = target.display

    @classmethod
    async def connect(cls, target: DatabaseTarget, wait_s: float = WAIT_S) -> SqliteDatabase:
        path = target.location
        _make_parent(path)
        conn = await aiosqlite.connect(path)
        conn.row_factory = aiosqlite.Row
        try:
            # Another process's write lock ("database is locked") is waited for, up to wait_s.
            await conn.execute(f"PRAGMA busy_timeout={int(wait_s * 1000)}")
            await _enable_wal(conn, wait_s)
            await conn.execute("PRAGMA synchronous=NORMAL")
            await conn.execute("PRAGMA foreign_keys=ON")
        except BaseException:
            await conn.close()
            raise
        return cls(conn, target)

    async def execute(self, sql: str, params: Params = ()) -> int:
        async with self.transaction() as tx:
            return await tx.execute(sql, params)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Any]:
        async with self._lock:
            async with self._conn.execute(sql, params) as cursor:
                return list(await cursor.fetchall())

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[_SqliteTx]:
        async with self._lock:
            try:
                # Inside the try: a task cancelled while its BEGIN runs in the connection's thread
                # (a lease renewal at shutdown) has begun all the same. The rollback queues behind
                # it on that thread, so the next transaction never finds this one open.
                await self._conn.execute("BEGIN IMMEDIATE")
                yield _SqliteTx(self._conn)
                await self._conn.commit()
            except BaseException:
                await self._conn.rollback()
                raise

    async def script(self, sql: str) -> None:
        """Outside any transaction (DDL that SQLite runs in autocommit)."""
        async with self._lock:
            await self._conn.execute(sql)
            await self._conn.commit()

    async def retrying(self, op: Callable[[], Awaitable[T]]) -> T:
        """Once: SQLite has no connection to lose, and its busy timeout waits for the lock."""
        return await op()

    async def close(self) -> None:
        async with self._lock:
            await self._conn.close()


def _make_parent(path: str) -> None:
    if path != ":memory:":
        Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)


async def _enable_wal(conn: aiosqlite.Connection, wait_s: float) -> None:
    """Switch to WAL. The switch needs an exclusive lock and SQLite may report SQLITE_BUSY at once
    (without its busy handler) while another connection opens the same fresh file: retry a while."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            await conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.02)


# --------------------------------------------------------------------------- PostgreSQL


class _PgRow(tuple):
    """A row readable by position and by column name, like sqlite3.Row."""

    __slots__ = ()
    _index: ClassVar[dict[str, int]] = {}

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, str):
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._index)


def _pg_row_factory(cursor: Any) -> Any:
    names = [c.name for c in cursor.description or ()]
    row_type = type("Row", (_PgRow,), {"__slots__": (), "_index": {n: i for i, n in enumerate(names)}})
    return lambda values: row_type(values)


class _PgTx:
    def __init__(self, conn: Any):
        self._conn = conn

    async def execute(self, sql: str, params: Params = ()) -> int:
        cursor = await self._conn.execute(to_pyformat(sql), params or None)
        return cursor.rowcount

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        rows = list(rows)
        if rows:
            async with self._conn.cursor() as cursor:
                await cursor.executemany(to_pyformat(sql), rows)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Any]:
        cursor = await self._conn.execute(to_pyformat(sql), params or None)
        return list(await cursor.fetchall())

    async def lock(self, key: str) -> None:
        """A transaction-scoped advisory lock on `key` (released at commit or rollback)."""
        await self._conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))


@contextmanager
def _quiet_pool() -> Iterator[None]:
    """psycopg_pool logs a warning for each failed attempt while it opens (often with an empty
    message): at start-up the one line that says the database cannot be reached is ours."""
    pool_log = logging.getLogger("psycopg.pool")
    level = pool_log.level
    pool_log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        pool_log.setLevel(level)


class PostgresDatabase:
    """A psycopg_pool connection pool; each operation or transaction borrows one connection."""

    dialect = POSTGRESQL

    def __init__(self, pool: Any, target: DatabaseTarget, wait_s: float = WAIT_S):
        self._pool = pool
        self.display = target.display
        self.wait_s = wait_s

    @classmethod
    async def connect(
        cls, target: DatabaseTarget, max_size: int = _POOL_MAX, wait_s: float = WAIT_S
    ) -> PostgresDatabase:
        try:
            from psycopg_pool import AsyncConnectionPool
        except ImportError as exc:  # the optional extra is not installed
            raise DatabaseUnavailable(
                "DATABASE_URL points at PostgreSQL, but psycopg is not installed: "
                "pip install 'llm-council-bot[postgres]'"
            ) from exc

        await check_reachable(target)  # one line in seconds, not after the pool's open timeout
        pool = AsyncConnectionPool(
            target.location,
            min_size=1,
            max_size=max_size,
            kwargs={"autocommit": True, "row_factory": _pg_row_factory},
            open=False,
            name="council",
            # A connection is checked as it is lent (one round trip), so one the server closed
            # (restart, failover) is replaced instead of failing the next statement.
            check=AsyncConnectionPool.check_connection,
            timeout=wait_s,
        )
        try:
            with _quiet_pool():
                await pool.open(wait=True, timeout=15)
        except Exception as exc:
            await pool.close()
            # psycopg's message may quote the conninfo: say where without the password.
            raise DatabaseUnavailable(f"cannot connect to {target.display} ({type(exc).__name__})") from None
        return cls(pool, target, wait_s)

    async def retrying(self, op: Callable[[], Awaitable[T]]) -> T:
        """`op()`, run again after a lost connection until `wait_s` has passed."""
        return await retrying(op, wait_s=self.wait_s, where=self.display)

    async def execute(self, sql: str, params: Params = ()) -> int:
        async def once() -> int:
            async with self._pool.connection() as conn:
                cursor = await conn.execute(to_pyformat(sql), params or None)
                return int(cursor.rowcount)

        return await self.retrying(once)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Any]:
        async def once() -> list[Any]:
            async with self._pool.connection() as conn:
                cursor = await conn.execute(to_pyformat(sql), params or None)
                return list(await cursor.fetchall())

        return await self.retrying(once)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[_PgTx]:
        async with self._pool.connection() as conn, conn.transaction():
            yield _PgTx(conn)

    async def script(self, sql: str) -> None:
        async with self._pool.connection() as conn:
            await conn.execute(sql)

    async def close(self) -> None:
        await self._pool.close()
