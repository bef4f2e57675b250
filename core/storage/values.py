"""How values are written: UTC ISO-8601 times (text order is time order), JSON text, filters, INSERTs."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from enum import Enum
from typing import Any


def iso(value: datetime) -> str:
    """UTC ISO-8601 with fixed microsecond precision, so that text order is time order.

    Naive datetimes are taken to be UTC.
    """
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def now_iso() -> str:
    return iso(datetime.now(UTC))


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def plain(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value


def filters(platform=None, workspace_id=None, channel_id=None, user_id=None, prefix: str = "") -> tuple[str, list]:
    """WHERE clause for the optional history filters (None means "any")."""
    clauses, params = [], []
    for column, value in (
        ("platform", platform),
        ("workspace_id", workspace_id),
        ("channel_id", channel_id),
        ("user_id", user_id),
    ):
        if value is not None:
            clauses.append(f"{prefix}{column} = ?")
            params.append(plain(value))
    return (" AND ".join(clauses) or "1=1"), params


def insert_sql(table: str, columns: Iterable[str]) -> str:
    """`INSERT INTO table (a, b) VALUES (:a, :b)`: the column list is written once, as a row's keys.
    `table` and `columns` are the storage modules' own (or the schema's), never input."""
    names = list(columns)
    return f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join(':' + name for name in names)})"
