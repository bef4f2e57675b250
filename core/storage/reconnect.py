"""Riding out a lost database connection: PostgreSQL restarted, failed over, or a network blip.

An operation that fails because the connection went away (psycopg's OperationalError with a
connection or shutdown SQLSTATE, or no SQLSTATE at all, and the pool's timeout) is tried again with
jittered exponential backoff until the database's wait (`DATABASE_WAIT_S`) is spent; then it
raises `DatabaseUnavailable`, one line. The pool checks each connection as it lends it, so the
retry gets a fresh one. Anything else (a constraint, a syntax error) is raised at once.

A transaction cannot be replayed from inside its `async with` block, so the repositories' write
methods that use one are decorated with `reconnecting`, which runs the whole method again: each is
one transaction that either committed or rolled back, so running it again is safe (the rare commit
whose acknowledgement was lost with the connection is the one case a write may run twice; the
writes that matter are upserts for that reason).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
import sqlite3
import time
from collections.abc import Awaitable, Callable
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")
P = ParamSpec("P")
_FIRST_DELAY_S = 0.1
_MAX_DELAY_S = 2.0
# SQLSTATE classes of a connection that went away: 08 connection exception, 57P admin/crash
# shutdown and "cannot connect now" (a server starting up or in recovery).
_LOST = ("08", "57P")


class DatabaseUnavailable(RuntimeError):
    """The database server cannot be reached or its driver is missing (message has no password)."""


def storage_failure(exc: BaseException) -> str:
    """Why a write failed, in one line without a password: SQLite's own words ("database or disk
    is full", "attempt to write a readonly database"), the reconnect's, or the error's first line."""
    text = str(exc).strip().splitlines()
    if isinstance(exc, DatabaseUnavailable | sqlite3.Error) and text:
        return text[0]
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def connection_lost(exc: BaseException) -> bool:
    """Whether `exc` says the connection to PostgreSQL went away (as opposed to a refused statement)."""
    try:
        import psycopg
    except ImportError:
        return False
    if not isinstance(exc, psycopg.OperationalError):
        return False
    sqlstate = getattr(exc, "sqlstate", None)
    return sqlstate is None or sqlstate.startswith(_LOST)


async def retrying(op: Callable[[], Awaitable[T]], *, wait_s: float, where: str) -> T:
    """`op()`, tried again after a lost connection until `wait_s` seconds have passed."""
    deadline = time.monotonic() + wait_s
    delay = _FIRST_DELAY_S
    while True:
        try:
            return await op()
        except Exception as exc:
            if not connection_lost(exc):
                raise
            if time.monotonic() + delay > deadline:
                raise DatabaseUnavailable(
                    f"lost the connection to {where} and could not reconnect within {wait_s:g} s ({type(exc).__name__})"
                ) from exc
            log.warning("database %s: connection lost (%s), trying again in %.1f s", where, type(exc).__name__, delay)
            await asyncio.sleep(delay * random.uniform(0.5, 1.0))
            delay = min(delay * 2, _MAX_DELAY_S)


class _Retries(Protocol):
    async def retrying(self, op: Callable[[], Awaitable[Any]]) -> Any: ...


class _Repository(Protocol):
    @property
    def _db(self) -> _Retries: ...


R = TypeVar("R", bound=_Repository)


def reconnecting(method: Callable[Concatenate[R, P], Awaitable[T]]) -> Callable[Concatenate[R, P], Awaitable[T]]:
    """A repository method run again, whole, after a lost connection (see the module docstring)."""

    @functools.wraps(method)
    async def again(self: R, *args: P.args, **kwargs: P.kwargs) -> T:
        result: T = await self._db.retrying(lambda: method(self, *args, **kwargs))
        return result

    return again
