"""`council migrate-db`: copy a whole history from one database to another (SQLite to PostgreSQL,
or any direction), both at the newest schema version.

The target must be empty unless `merge` is set; merging keeps what the target has (a council id,
a channel's settings or an event id already there wins) and adds the rest. Councils travel in
pages with their child rows, one transaction per page, so memory stays flat on large histories.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core.errors import CouncilError
from core.models import CouncilResult
from core.storage import totals
from core.storage.database import Transaction, redact_url
from core.storage.facade import Storage
from core.storage.values import insert_sql

COUNCIL_CHILDREN = ("answers", "reviews", "label_map", "aggregates", "synthesis", "revisions")
# Tables copied whole, with the conflict target that makes a merge keep the target's row.
OTHER_TABLES: dict[str, str | None] = {
    "channel_settings": "(channel_key)",
    "audit_log": None,  # the target numbers entries anew (copied in order, so order is kept)
    "processed_events": "(platform, event_id)",
    "rate_hits": None,
    "council_messages": "(platform, channel_id, message_id)",  # after the councils they name
    "eval_runs": "(id)",  # `council eval` runs, then their samples
    "eval_samples": "(run_id, config, item_id)",
    "api_idempotency": "(scope, idem_key)",
    # Many workspaces (migration 0013): ciphertext copied as is, so the same COUNCIL_SECRET_KEY reads it.
    "slack_bots": "(enterprise_key, team_key)",
    "slack_installations": "(enterprise_key, team_key, user_key)",
    "tenant_keys": "(tenant)",
    "tenant_budgets": "(tenant)",
}
_PAGE = 500


class TargetNotEmpty(RuntimeError):
    """The target already holds data and merging was not asked for."""


@dataclass
class CopyReport:
    copied: dict[str, int] = field(default_factory=dict)
    skipped_councils: int = 0  # already in the target (merge)
    source: str = ""  # both locations as they may be shown (no password)
    target: str = ""

    def add(self, table: str, n: int) -> None:
        self.copied[table] = self.copied.get(table, 0) + n


async def migrate_database(source_url: str, target_url: str, *, merge: bool = False) -> CopyReport:
    """Opens both databases (migrating each to the newest schema), copies, closes; every failure is
    one CouncilError naming the database without its password."""
    source = await _open(source_url)
    try:
        target = await _open(target_url)
        try:
            report = await copy_history(source, target, merge=merge)
        except TargetNotEmpty as exc:
            raise CouncilError(str(exc)) from None
        finally:
            await target.close()
    finally:
        await source.close()
    report.source, report.target = source.location, target.location
    return report


async def _open(url: str) -> Storage:
    try:
        return await Storage.open(url)
    except Exception as exc:
        raise CouncilError(f"Cannot open {redact_url(url)}: {exc}") from None


async def is_empty(storage: Storage) -> bool:
    for table in ("councils", *OTHER_TABLES):
        if (await storage.db.fetchall(f"SELECT COUNT(*) FROM {table}"))[0][0]:
            return False
    return True


async def copy_history(source: Storage, target: Storage, *, merge: bool = False) -> CopyReport:
    if not merge and not await is_empty(target):
        raise TargetNotEmpty(
            f"{target.location} already holds councils or settings; copy into an empty database, "
            "or pass --merge to add what it lacks"
        )
    report = CopyReport()
    last = ""
    while True:
        councils = await source.db.fetchall("SELECT * FROM councils WHERE id > ? ORDER BY id LIMIT ?", (last, _PAGE))
        if not councils:
            break
        last = councils[-1]["id"]
        ids = [row["id"] for row in councils]
        async with target.db.transaction() as tx:
            present = {r[0] for r in await tx.fetchall(_in("SELECT id FROM councils WHERE id IN", ids), ids)}
            new = [row for row in councils if row["id"] not in present]
            report.skipped_councils += len(councils) - len(new)
            await _insert(tx, "councils", new, report)
            new_ids = [row["id"] for row in new]
            for row in new:  # the leaderboard totals of the target learn of the copied councils
                if row["result"] is not None:
                    await totals.apply(tx, CouncilResult.model_validate_json(row["result"]), 1)
            if new_ids:
                for table in COUNCIL_CHILDREN:
                    rows = await source.db.fetchall(_in(f"SELECT * FROM {table} WHERE council_id IN", new_ids), new_ids)
                    await _insert(tx, table, rows, report)
    for table, conflict in OTHER_TABLES.items():
        drop = ("id",) if table == "audit_log" else ()
        rows = await source.db.fetchall(f"SELECT * FROM {table} ORDER BY {'id' if drop else '1'}")
        if merge and conflict is None:  # no key to conflict on: leave out rows the target already has
            have = {_values(row, drop) for row in await target.db.fetchall(f"SELECT * FROM {table}")}
            rows = [row for row in rows if _values(row, drop) not in have]
        async with target.db.transaction() as tx:
            await _insert(tx, table, rows, report, conflict=conflict, drop=drop)
    return report


def _values(row: Any, drop: Sequence[str]) -> tuple:
    return tuple(row[c] for c in row.keys() if c not in drop)


def _in(sql: str, values: Sequence[Any]) -> str:
    return f"{sql} ({', '.join('?' * len(values))})"


async def _insert(
    tx: Transaction,
    table: str,
    rows: Sequence[Any],
    report: CopyReport,
    *,
    conflict: str | None = None,
    drop: Sequence[str] = (),
) -> None:
    if not rows:
        report.add(table, 0)
        return
    columns = [c for c in rows[0].keys() if c not in drop]
    sql = insert_sql(table, columns)
    values = [{c: row[c] for c in columns} for row in rows]
    if conflict is None:
        await tx.executemany(sql, values)
        report.add(table, len(rows))
        return
    sql += f" ON CONFLICT {conflict} DO NOTHING"
    for value in values:  # one by one, so that the count says what was really added
        report.add(table, await tx.execute(sql, value))
