"""SQLite storage (aiosqlite, WAL) with numbered migrations from `migrations/`.

Everything of a council is kept: the full result as JSON for an exact round trip, and
normalised rows (answers, reviews with ballots, label map, aggregates, synthesis) for history,
leaderboards and anyone querying the file with SQL. Secrets never reach the database: the
config snapshot is a `CouncilConfig` (model ids and knobs only).

Migrations (in the style of simonw/llm's numbered migrations): `migrations/NNNN_name.sql` files
are applied in order at start-up, each in one `BEGIN IMMEDIATE` transaction together with its
`schema_version` row, so a failed file leaves nothing behind and two processes opening a fresh
file at once apply each file exactly once. A database whose schema is newer than the newest
file this code ships is refused (`SchemaTooNew`) rather than misread.

Concurrency: one connection per `Storage`; every operation (reads too) holds one asyncio lock,
so a reader never observes another task's half-written transaction on the shared connection,
and every write commits (or rolls back) before the lock is released.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import time
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from enum import Enum
from pathlib import Path
from typing import Any

import aiosqlite

import core
from core.models import (
    AuditEntry,
    BallotOrders,
    ChannelSettings,
    ConversationTurn,
    CouncilConfig,
    CouncilRequest,
    CouncilResult,
    CouncilStatus,
    CouncilSummary,
    DailyUsage,
    ErrorInfo,
    ErrorKind,
    ModelStats,
    Origin,
    Usage,
)

# Beside `core/` both in the repository and in the installed wheel (pyproject includes migrations/*.sql).
MIGRATIONS_DIR = Path(core.__file__).resolve().parent.parent / "migrations"
_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_SQL_NOISE = re.compile(r"--[^\n]*|/\*.*?\*/|[\s;]", re.S)  # comments, blanks, empty statements
_EVENT_TTL_S = 86400.0  # processed event ids older than this are forgotten
_EVENT_PRUNE_EVERY = 500  # claims between two clean-ups of processed_events
_BUSY_TIMEOUT_MS = 5000
RUNNING = "running"  # councils.status while a council has not finished (not a CouncilStatus)

__all__ = ["MIGRATIONS_DIR", "MigrationError", "SchemaTooNew", "Storage"]


class SchemaTooNew(RuntimeError):
    """The database was written by a newer version of the bot; refuse to touch it."""


class MigrationError(RuntimeError):
    """A migration file is malformed or failed; the database is left at the previous version."""


def _iso(value: datetime) -> str:
    """UTC ISO-8601 with fixed microsecond precision, so that text order is time order.

    Naive datetimes are taken to be UTC.
    """
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def _now_iso() -> str:
    return _iso(datetime.now(UTC))


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value


def _filters(platform=None, workspace_id=None, channel_id=None, user_id=None, prefix: str = "") -> tuple[str, list]:
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
            params.append(_plain(value))
    return (" AND ".join(clauses) or "1=1"), params


def _split_statements(script: str) -> list[str]:
    """Split a SQL script into complete statements (triggers' inner `;` and comments respected)."""
    statements, buffer = [], ""
    for piece in script.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    # What is left is unterminated (open quote or trigger): keep it, so that SQLite reports the
    # error instead of the text being silently dropped. The last piece got a `;` it never had.
    statements.append(buffer[:-1].strip())
    return [s for s in statements if _SQL_NOISE.sub("", s)]


def migration_files(migrations_dir: Path = MIGRATIONS_DIR) -> list[tuple[int, str, Path]]:
    """(version, name, path) of every `NNNN_name.sql`, in order; duplicates are an error."""
    found: dict[int, tuple[int, str, Path]] = {}
    for path in sorted(migrations_dir.glob("*.sql")):
        match = _MIGRATION_NAME.match(path.name)
        if not match:
            raise MigrationError(f"{path}: migration files must be named NNNN_name.sql (lower case)")
        version = int(match.group(1))
        if version in found:
            raise MigrationError(f"two migrations share version {version}: {found[version][2].name} and {path.name}")
        found[version] = (version, match.group(2), path)
    if not found:
        raise MigrationError(f"no migrations found in {migrations_dir}")
    return [found[v] for v in sorted(found)]


class Storage:
    """The council database. Open with `await Storage.open(path)`; the service is the only caller."""

    def __init__(self, db: aiosqlite.Connection, path: str):
        self._db = db
        self.path = path
        self._lock = asyncio.Lock()
        self._claims = 0

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    async def open(cls, path: str, migrations_dir: Path = MIGRATIONS_DIR) -> Storage:
        """Open (creating the parent directory), configure WAL, and apply pending migrations."""
        if path != ":memory:":
            Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        db = await aiosqlite.connect(path)
        db.row_factory = aiosqlite.Row
        storage = cls(db, path)
        try:
            await db.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
            await _enable_wal(db)
            await db.execute("PRAGMA synchronous=NORMAL")
            await db.execute("PRAGMA foreign_keys=ON")
            await storage._migrate(migrations_dir)
            await db.execute("DELETE FROM processed_events WHERE at < ?", (time.time() - _EVENT_TTL_S,))
            await db.commit()
        except BaseException:
            await db.close()
            raise
        return storage

    async def close(self) -> None:
        async with self._lock:
            await self._db.close()

    async def __aenter__(self) -> Storage:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _migrate(self, migrations_dir: Path) -> None:
        files = migration_files(migrations_dir)
        known = files[-1][0]
        db = self._db
        await db.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        await db.commit()
        self._refuse_if_too_new(await self._version(), known)
        for version, name, path in files:
            if version <= await self._version():
                continue
            statements = _split_statements(path.read_text(encoding="utf-8"))
            current = await self._version()
            # IMMEDIATE takes the write lock now, so the version re-read below cannot go stale.
            await db.execute("BEGIN IMMEDIATE")
            try:
                current = await self._version()
                self._refuse_if_too_new(current, known)
                if version <= current:  # another process applied it while we waited
                    await db.rollback()
                    continue
                for statement in statements:
                    await db.execute(statement)
                await db.execute(
                    "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
                    (version, name, _now_iso()),
                )
                await db.commit()
            except SchemaTooNew:
                await db.rollback()
                raise
            except sqlite3.Error as exc:
                await db.rollback()
                raise MigrationError(
                    f"migration {path.name} failed and was rolled back ({exc}); the database {self.path} "
                    f"stays at schema version {current}"
                ) from exc
            except BaseException:
                await db.rollback()
                raise

    def _refuse_if_too_new(self, current: int, known: int) -> None:
        if current > known:
            raise SchemaTooNew(
                f"the database {self.path} has schema version {current}, but this version of the bot "
                f"only knows up to {known}: upgrade the bot (or point DATABASE_URL elsewhere)"
            )

    async def _version(self) -> int:
        async with self._db.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version") as cursor:
            row = await cursor.fetchone()
        return int(row[0])

    async def schema_version(self) -> int:
        """The newest migration applied to this database."""
        async with self._lock:
            return await self._version()

    # ------------------------------------------------------------------ helpers

    async def _execute(self, sql: str, params: Iterable[Any] = ()) -> int:
        """One write in its own transaction; returns the number of rows it changed."""
        async with self._lock:
            try:
                cursor = await self._db.execute(sql, tuple(params))
                await self._db.commit()
            except BaseException:
                await self._db.rollback()
                raise
            return cursor.rowcount

    async def _fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[aiosqlite.Row]:
        async with self._lock:
            async with self._db.execute(sql, tuple(params)) as cursor:
                return list(await cursor.fetchall())

    async def _transaction(self, work, *, immediate: bool = False) -> None:
        """Run `await work()` (several statements) as one transaction under the lock. `immediate`
        takes the write lock at once: a read-then-write against other processes cannot go stale."""
        async with self._lock:
            await self._db.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
            try:
                await work()
                await self._db.commit()
            except BaseException:
                await self._db.rollback()
                raise

    # ------------------------------------------------------------------ councils

    async def save_council_started(self, request: CouncilRequest, owner_id: str | None = None) -> None:
        """Record a council as running, owned by `owner_id` (see `renew_owner`). A council already
        stored (running or finished) is left as is."""
        o = request.origin
        await self._execute(
            """INSERT INTO councils (id, created_at, status, question, history, platform, workspace_id,
               channel_id, channel_key, thread_id, user_id, user_name, members, chairman, config, owner_id)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT (id) DO NOTHING""",
            (
                request.council_id,
                _iso(request.created_at),
                RUNNING,
                request.question,
                _dumps([t.model_dump(mode="json") for t in request.history]),
                o.platform.value,
                o.workspace_id,
                o.channel_id,
                o.channel_key,
                o.thread_id,
                o.user_id,
                o.user_name,
                _dumps(request.config.members),
                request.config.chairman,
                request.config.model_dump_json(),
                owner_id,
            ),
        )

    async def save_result(self, result: CouncilResult) -> None:
        """Store a finished council, all tables in one transaction; saving again replaces it."""
        await self._transaction(lambda: self._write_result(result))

    async def save_results(self, results: Iterable[CouncilResult]) -> None:
        """Bulk import (benchmarks, imports from other tools): one transaction for all."""

        async def work() -> None:
            for result in results:
                await self._write_result(result)

        await self._transaction(work)

    async def _write_result(self, result: CouncilResult) -> None:
        db, cid = self._db, result.council_id
        request, o = result.request, result.request.origin
        winner = None
        if result.aggregate and result.aggregate.entries and result.aggregate.entries[0].average_rank is not None:
            winner = result.aggregate.entries[0].model
        await db.execute("DELETE FROM councils WHERE id = ?", (cid,))  # cascades to every child table
        await db.execute(
            """INSERT INTO councils (id, created_at, finished_at, status, question, history, platform, workspace_id,
               channel_id, channel_key, thread_id, user_id, user_name, members, chairman, config, winner, agreement_w,
               error, notices, timings, prompt_tokens, completion_tokens, cost_usd, duration_s, result)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (
                cid,
                _iso(request.created_at),
                _iso(result.finished_at),
                result.status.value,
                request.question,
                _dumps([t.model_dump(mode="json") for t in request.history]),
                o.platform.value,
                o.workspace_id,
                o.channel_id,
                o.channel_key,
                o.thread_id,
                o.user_id,
                o.user_name,
                _dumps(request.config.members),
                request.config.chairman,
                request.config.model_dump_json(),
                winner,
                result.aggregate.agreement_w if result.aggregate else None,
                result.error.model_dump_json() if result.error else None,
                _dumps(result.notices),
                _dumps(result.timings),
                result.usage.prompt_tokens,
                result.usage.completion_tokens,
                result.usage.cost_usd,
                result.timings.get("total_s"),
                result.model_dump_json(),
            ),
        )
        await db.executemany(
            """INSERT INTO answers (council_id, position, model, label, text, error_kind, error_message, error_status,
               latency_s, prompt_tokens, completion_tokens, cost_usd) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            [
                (cid, i, a.model, a.label, a.text, *_error_cols(a.error), a.latency_s, *_usage_cols(a.usage))
                for i, a in enumerate(result.answers)
            ],
        )
        await db.executemany(
            """INSERT INTO reviews (council_id, position, reviewer, text, shown_labels, ballot_labels, ballot_models,
               parse_status, error_kind, error_message, error_status, latency_s, prompt_tokens, completion_tokens,
               cost_usd) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            [
                (
                    cid,
                    i,
                    r.reviewer,
                    r.text,
                    _dumps(r.shown_labels),
                    _dumps(r.ballot_labels),
                    _dumps(r.ballot_models),
                    r.parse_status.value,
                    *_error_cols(r.error),
                    r.latency_s,
                    *_usage_cols(r.usage),
                )
                for i, r in enumerate(result.reviews)
            ],
        )
        await db.executemany(
            "INSERT INTO label_map (council_id, label, model) VALUES (?, ?, ?)",
            [(cid, label, model) for label, model in result.label_to_model.items()],
        )
        if result.aggregate:
            await db.executemany(
                """INSERT INTO aggregates (council_id, model, label, position, average_rank, rankings_count, borda,
                   condorcet_wins, first_place_votes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                [
                    (
                        cid,
                        e.model,
                        e.label,
                        e.position,
                        e.average_rank,
                        e.rankings_count,
                        e.borda,
                        e.condorcet_wins,
                        e.first_place_votes,
                    )
                    for e in result.aggregate.entries
                ],
            )
        if result.synthesis:
            s = result.synthesis
            await db.execute(
                """INSERT INTO synthesis (council_id, model, text, by_chairman, note, latency_s, prompt_tokens,
                   completion_tokens, cost_usd) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (cid, s.model, s.text, int(s.by_chairman), s.note, s.latency_s, *_usage_cols(s.usage)),
            )
        await self._write_material(cid, request)

    async def _write_material(self, cid: str, request: CouncilRequest) -> None:
        """The files and sources a council read (migration 0004); removed with the council."""
        await self._db.executemany(
            """INSERT INTO council_attachments (council_id, position, name, kind, media_type, size, sha256, page_count,
               text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            [
                (cid, i, a.name, a.kind, a.media_type, a.size, a.sha256, a.page_count, a.text if a.sections else None)
                for i, a in enumerate(request.attachments)
            ],
        )
        await self._db.executemany(
            """INSERT INTO council_sources (council_id, position, title, url, snippet, published)
               VALUES (?, ?, ?, ?, ?, ?)""",
            [
                (cid, i, r.title, r.url, r.snippet, r.published.isoformat() if r.published else None)
                for i, r in enumerate(request.sources, 1)
            ],
        )

    async def get_result(self, council_id: str) -> CouncilResult | None:
        """The stored result, exactly as saved; None if unknown or still running."""
        rows = await self._fetchall("SELECT result FROM councils WHERE id = ?", (council_id,))
        if not rows or rows[0]["result"] is None:
            return None
        return CouncilResult.model_validate_json(rows[0]["result"])

    # ------------------------------------------------------------------ ownership of running councils

    async def renew_owner(self, owner_id: str, lease_s: float, *, host: str = "", pid: int = 0) -> None:
        """Register or renew a process instance's lease: its councils are its own until `lease_s` from now."""
        now = time.time()
        await self._execute(
            """INSERT INTO council_owners (owner_id, host, pid, started_at, renewed_at, lease_until)
               VALUES (?, ?, ?, ?, ?, ?)
               ON CONFLICT (owner_id) DO UPDATE SET renewed_at = excluded.renewed_at,
               lease_until = excluded.lease_until""",
            (owner_id, host, pid, now, now, now + lease_s),
        )

    async def drop_owner(self, owner_id: str) -> None:
        """A clean shutdown: whatever the owner still runs is orphaned at once (the next reaper takes it)."""
        await self._execute("DELETE FROM council_owners WHERE owner_id = ?", (owner_id,))

    async def mark_interrupted(self, now: float | None = None) -> int:
        """Store as failed, with why, the running councils whose owner stopped renewing its lease
        (or that have no owner: written before owners existed). Councils of live owners are left
        alone. Returns how many were marked."""
        now = time.time() if now is None else now
        marked = 0

        async def work() -> None:
            nonlocal marked
            async with self._db.execute(
                """SELECT * FROM councils WHERE status = ? AND (owner_id IS NULL OR owner_id NOT IN
                   (SELECT owner_id FROM council_owners WHERE lease_until >= ?))""",
                (RUNNING, now),
            ) as cursor:
                rows = list(await cursor.fetchall())
            for row in rows:
                await self._write_result(
                    CouncilResult(
                        council_id=row["id"],
                        request=_request_from_row(row),
                        status=CouncilStatus.FAILED,
                        error=ErrorInfo(
                            kind=ErrorKind.CANCELLED,
                            message="The bot stopped (or restarted) while this council was running.",
                        ),
                        notices=["Interrupted: the process running this council stopped; ask again to rerun it."],
                    )
                )
            await self._db.execute("DELETE FROM council_owners WHERE lease_until < ?", (now,))
            marked = len(rows)

        await self._transaction(work, immediate=True)
        return marked

    async def list_councils(
        self, *, platform=None, workspace_id=None, channel_id=None, user_id=None, limit: int = 20, offset: int = 0
    ) -> list[CouncilSummary]:
        """Finished councils (any status but running), newest first; None filters match anything."""
        where, params = _filters(platform, workspace_id, channel_id, user_id)
        rows = await self._fetchall(
            f"""SELECT id, created_at, question, status, members, chairman, winner, agreement_w, cost_usd, duration_s,
                       platform, workspace_id, channel_id, thread_id, user_id, user_name
                FROM councils WHERE {where} AND status != ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?""",
            (*params, RUNNING, max(0, limit), max(0, offset)),
        )
        summaries = [
            CouncilSummary(
                council_id=r["id"],
                created_at=datetime.fromisoformat(r["created_at"]),
                question=r["question"],
                status=CouncilStatus(r["status"]),
                members=json.loads(r["members"]),
                chairman=r["chairman"],
                winner=r["winner"],
                agreement_w=r["agreement_w"],
                cost_usd=r["cost_usd"],
                duration_s=r["duration_s"],
                origin=_origin_from_row(r),
            )
            for r in rows
        ]
        return await self._with_material(summaries)

    async def _with_material(self, summaries: list[CouncilSummary]) -> list[CouncilSummary]:
        """What each listed council read (migration 0004): its files' names and how many sources."""
        if not summaries:
            return summaries
        ids = [s.council_id for s in summaries]
        marks = ", ".join("?" for _ in ids)
        files = await self._fetchall(
            f"SELECT council_id, name FROM council_attachments WHERE council_id IN ({marks}) ORDER BY position", ids
        )
        sources = await self._fetchall(
            f"SELECT council_id, COUNT(*) AS n FROM council_sources WHERE council_id IN ({marks}) GROUP BY council_id",
            ids,
        )
        by_id = {s.council_id: s for s in summaries}
        for row in files:
            by_id[row["council_id"]].files.append(row["name"])
        for row in sources:
            by_id[row["council_id"]].sources = row["n"]
        return summaries

    async def ballot_orders(self, *, platform=None, workspace_id=None, channel_id=None) -> BallotOrders:
        """Every non-empty parsed ballot (model ids, best first), oldest council first and in review
        order within a council, so that the leaderboard's seeded bootstrap is repeatable."""
        where, params = _filters(platform, workspace_id, channel_id, prefix="c.")
        source = f"reviews r JOIN councils c ON c.id = r.council_id WHERE {where} AND r.ballot_models != '[]'"
        rows = await self._fetchall(
            f"SELECT r.ballot_models FROM {source} ORDER BY c.created_at, c.id, r.position", params
        )
        councils = (await self._fetchall(f"SELECT COUNT(DISTINCT r.council_id) FROM {source}", params))[0][0]
        # One JSON document for all ballots: decoding (and validating) them row by row cost more
        # than the query; the rows were validated when they were written.
        orders = json.loads("[" + ",".join([row[0] for row in rows]) + "]")
        return BallotOrders.model_construct(orders=orders, councils=councils)

    async def model_stats(self, *, platform=None, workspace_id=None, channel_id=None) -> dict[str, ModelStats]:
        """Per model: councils it was a member of, failed answers, stage-1 mean latency, cost of all its
        calls (answers, reviews, syntheses), first places and mean of its average rank in aggregates."""
        where, params = _filters(platform, workspace_id, channel_id, prefix="c.")

        # Without a filter every row counts: skipping the join to councils halves these scans.
        def scope(table: str) -> str:
            return (
                f"{table} JOIN councils c ON c.id = {table.split()[-1]}.council_id WHERE {where}" if params else table
            )

        stats: dict[str, ModelStats] = {}
        for r in await self._fetchall(
            f"""SELECT a.model, COUNT(DISTINCT a.council_id), SUM(a.error_kind IS NOT NULL), AVG(a.latency_s)
                FROM {scope("answers a")} GROUP BY a.model""",
            params,
        ):
            stats[r[0]] = ModelStats(model=r[0], councils=r[1], failures=r[2] or 0, average_latency_s=r[3])
        for r in await self._fetchall(
            f"""SELECT g.model, SUM(g.position = 1 AND g.average_rank IS NOT NULL), AVG(g.average_rank)
                FROM {scope("aggregates g")} GROUP BY g.model""",
            params,
        ):
            entry = stats.setdefault(r[0], ModelStats(model=r[0]))
            entry.first_places, entry.mean_average_rank = r[1] or 0, r[2]
        for r in await self._fetchall(
            f"""SELECT calls.model, SUM(calls.cost_usd) FROM (
                    SELECT council_id, model, cost_usd FROM answers
                    UNION ALL SELECT council_id, reviewer, cost_usd FROM reviews
                    UNION ALL SELECT council_id, model, cost_usd FROM synthesis
                ) AS {scope("calls")} GROUP BY calls.model""",
            params,
        ):
            if r[1] is not None:
                stats.setdefault(r[0], ModelStats(model=r[0])).cost_usd = r[1]
        return stats

    async def prune(self, older_than: datetime) -> int:
        """Delete councils created before `older_than` (with all their rows). Returns how many."""
        return await self._execute(
            "DELETE FROM councils WHERE created_at < ? AND status != ?", (_iso(older_than), RUNNING)
        )

    async def spent_since(self, channel_key: str | None, since: datetime) -> float:
        """Total cost (USD) of councils created since `since`, for one channel key or all (None)."""
        sql = "SELECT COALESCE(SUM(cost_usd), 0) FROM councils WHERE created_at >= ?"
        params: list[Any] = [_iso(since)]
        if channel_key is not None:
            sql += " AND channel_key = ?"
            params.append(channel_key)
        rows = await self._fetchall(sql, params)
        return float(rows[0][0])

    async def usage_by_day(self, channel_key: str | None = None, days: int = 30) -> list[DailyUsage]:
        """Councils, tokens and cost per UTC day over the last `days` days, oldest first (empty days omitted)."""
        since = datetime.now(UTC) - timedelta(days=days)
        sql = """SELECT substr(created_at, 1, 10) AS day, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens),
                        COALESCE(SUM(cost_usd), 0) FROM councils WHERE created_at >= ?"""
        params: list[Any] = [_iso(since)]
        if channel_key is not None:
            sql += " AND channel_key = ?"
            params.append(channel_key)
        rows = await self._fetchall(sql + " GROUP BY day ORDER BY day", params)
        return [
            DailyUsage(day=r[0], councils=r[1], prompt_tokens=r[2] or 0, completion_tokens=r[3] or 0, cost_usd=r[4])
            for r in rows
        ]

    # ------------------------------------------------------------------ channel settings and audit

    async def get_channel_settings(self, channel_key: str) -> ChannelSettings | None:
        rows = await self._fetchall("SELECT * FROM channel_settings WHERE channel_key = ?", (channel_key,))
        if not rows:
            return None
        r = rows[0]
        return ChannelSettings(
            channel_key=r["channel_key"],
            members=json.loads(r["members"]) if r["members"] is not None else None,
            chairman=r["chairman"],
            user_limit_per_hour=r["user_limit_per_hour"],
            channel_limit_per_hour=r["channel_limit_per_hour"],
            daily_budget_usd=r["daily_budget_usd"],
            search=bool(r["search"]) if r["search"] is not None else None,
        )

    async def put_channel_settings(self, settings: ChannelSettings, actor_id: str) -> None:
        """Insert or replace a channel's overrides (the caller writes the audit entry)."""
        await self._execute(
            """INSERT OR REPLACE INTO channel_settings (channel_key, members, chairman, user_limit_per_hour,
               channel_limit_per_hour, daily_budget_usd, updated_at, updated_by, search)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (
                settings.channel_key,
                _dumps(settings.members) if settings.members is not None else None,
                settings.chairman,
                settings.user_limit_per_hour,
                settings.channel_limit_per_hour,
                settings.daily_budget_usd,
                _now_iso(),
                actor_id,
                int(settings.search) if settings.search is not None else None,
            ),
        )

    async def delete_channel_settings(self, channel_key: str) -> None:
        await self._execute("DELETE FROM channel_settings WHERE channel_key = ?", (channel_key,))

    async def audit(self, channel_key: str, actor_id: str, action: str, detail: dict) -> None:
        await self._execute(
            "INSERT INTO audit_log (at, channel_key, actor_id, action, detail) VALUES (?, ?, ?, ?, ?)",
            (_now_iso(), channel_key, actor_id, action, _dumps(detail)),
        )

    async def audit_log(self, channel_key: str | None = None, limit: int = 50) -> list[AuditEntry]:
        """Newest first."""
        sql, params = "SELECT at, channel_key, actor_id, action, detail FROM audit_log", []
        if channel_key is not None:
            sql += " WHERE channel_key = ?"
            params.append(channel_key)
        rows = await self._fetchall(sql + " ORDER BY id DESC LIMIT ?", (*params, max(0, limit)))
        return [
            AuditEntry(
                at=datetime.fromisoformat(r[0]), channel_key=r[1], actor_id=r[2], action=r[3], detail=json.loads(r[4])
            )
            for r in rows
        ]

    # ------------------------------------------------------------------ events and rate limits

    async def claim_event(self, platform: str, event_id: str) -> bool:
        """True only the first time (platform, event_id) is seen; atomic (INSERT OR IGNORE).

        Ids older than a day are forgotten at start-up and every few hundred claims.
        """
        now = time.time()
        claimed = await self._execute(
            "INSERT OR IGNORE INTO processed_events (platform, event_id, at) VALUES (?, ?, ?)",
            (_plain(platform), event_id, now),
        )
        self._claims += 1
        if self._claims % _EVENT_PRUNE_EVERY == 0:
            await self._execute("DELETE FROM processed_events WHERE at < ?", (now - _EVENT_TTL_S,))
        return claimed == 1

    async def record_hit(self, key: str, at: float) -> None:
        await self._execute("INSERT INTO rate_hits (key, at) VALUES (?, ?)", (key, at))

    async def record_hits(self, keys: Iterable[str], at: float, *, forget_before: float | None = None) -> None:
        """Record one hit per key at `at` in one transaction; optionally drop every hit older than `forget_before`."""
        keys = list(keys)

        async def work() -> None:
            await self._db.executemany("INSERT INTO rate_hits (key, at) VALUES (?, ?)", [(k, at) for k in keys])
            if forget_before is not None:
                await self._db.execute("DELETE FROM rate_hits WHERE at < ?", (forget_before,))

        await self._transaction(work)

    async def count_hits(self, key: str, since: float) -> int:
        rows = await self._fetchall("SELECT COUNT(*) FROM rate_hits WHERE key = ? AND at >= ?", (key, since))
        return int(rows[0][0])

    async def oldest_hit_since(self, key: str, since: float) -> float | None:
        rows = await self._fetchall("SELECT MIN(at) FROM rate_hits WHERE key = ? AND at >= ?", (key, since))
        return rows[0][0]

    async def hits_since(self, key: str, since: float) -> list[float]:
        """Times of the hits of `key` since `since`, oldest first."""
        rows = await self._fetchall("SELECT at FROM rate_hits WHERE key = ? AND at >= ? ORDER BY at", (key, since))
        return [r[0] for r in rows]


async def _enable_wal(db: aiosqlite.Connection) -> None:
    """Switch to WAL. The switch needs an exclusive lock and SQLite may report SQLITE_BUSY at once
    (without its busy handler) while another connection opens the same fresh file: retry a while."""
    deadline = time.monotonic() + _BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            await db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.02)


def _error_cols(error: ErrorInfo | None) -> tuple[str | None, str | None, int | None]:
    return (error.kind.value, error.message, error.status) if error else (None, None, None)


def _usage_cols(usage: Usage) -> tuple[int, int, float | None]:
    return usage.prompt_tokens, usage.completion_tokens, usage.cost_usd


def _origin_from_row(row: aiosqlite.Row) -> Origin:
    return Origin(
        platform=row["platform"],
        workspace_id=row["workspace_id"],
        channel_id=row["channel_id"],
        thread_id=row["thread_id"],
        user_id=row["user_id"],
        user_name=row["user_name"],
    )


def _request_from_row(row: aiosqlite.Row) -> CouncilRequest:
    return CouncilRequest(
        council_id=row["id"],
        question=row["question"],
        config=CouncilConfig.model_validate_json(row["config"]),
        history=[ConversationTurn.model_validate(t) for t in json.loads(row["history"])],
        origin=_origin_from_row(row),
        created_at=datetime.fromisoformat(row["created_at"]),
    )
