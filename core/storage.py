"""SQLite storage (aiosqlite, WAL) with numbered migrations from `migrations/`.

Everything of a council is kept: the full result as JSON for an exact round trip, and
normalised rows (answers, reviews with ballots, label map, aggregates, synthesis) for history,
leaderboards and anyone querying the file with SQL.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterable

import aiosqlite

import core
from core.models import (
    AuditEntry,
    ChannelSettings,
    CouncilRequest,
    CouncilResult,
    CouncilStatus,
    CouncilSummary,
    DailyUsage,
    ErrorInfo,
    ErrorKind,
    ModelStats,
    Origin,
    StoredBallot,
    Usage,
)

MIGRATIONS_DIR = Path(core.__file__).resolve().parent.parent / "migrations"
_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_EVENT_TTL_S = 86400.0


class SchemaTooNew(RuntimeError):
    pass


def _iso(value: datetime) -> str:
    return value.astimezone(timezone.utc).isoformat()


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _filters(platform=None, workspace_id=None, channel_id=None, user_id=None, prefix: str = "") -> tuple[str, list]:
    clauses, params = [], []
    for column, value in (("platform", platform), ("workspace_id", workspace_id), ("channel_id", channel_id), ("user_id", user_id)):
        if value is not None:
            clauses.append(f"{prefix}{column} = ?")
            params.append(value)
    return (" AND ".join(clauses) or "1=1"), params


class Storage:
    def __init__(self, db: aiosqlite.Connection, path: str):
        self._db = db
        self.path = path
        self._write = asyncio.Lock()
        self._claims = 0

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    async def open(cls, path: str, migrations_dir: Path = MIGRATIONS_DIR) -> "Storage":
        if path != ":memory:":
            Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        db = await aiosqlite.connect(path)
        db.row_factory = aiosqlite.Row
        await db.execute("PRAGMA journal_mode=WAL")
        await db.execute("PRAGMA foreign_keys=ON")
        await db.execute("PRAGMA busy_timeout=5000")
        await db.execute("PRAGMA synchronous=NORMAL")
        storage = cls(db, path)
        try:
            await storage._migrate(migrations_dir)
        except Exception:
            await db.close()
            raise
        return storage

    async def close(self) -> None:
        await self._db.close()

    async def __aenter__(self) -> "Storage":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _migrate(self, migrations_dir: Path) -> None:
        await self._db.execute(
            "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        await self._db.commit()
        files = sorted(p for p in migrations_dir.glob("*.sql") if _MIGRATION_NAME.match(p.name))
        if not files:
            raise RuntimeError(f"no migrations found in {migrations_dir}")
        known = max(int(_MIGRATION_NAME.match(p.name).group(1)) for p in files)  # type: ignore[union-attr]
        current = await self.schema_version()
        if current > known:
            raise SchemaTooNew(
                f"the database {self.path} has schema version {current}, but this version of the bot "
                f"only knows up to {known}: upgrade the bot (or point DATABASE_URL elsewhere)"
            )
        for path in files:
            match = _MIGRATION_NAME.match(path.name)
            assert match
            version = int(match.group(1))
            if version <= current:
                continue
            # executescript would commit on its own; wrap each file in one explicit transaction.
            script = path.read_text(encoding="utf-8")
            await self._db.executescript(
                f"BEGIN;\n{script}\nINSERT INTO schema_version VALUES ({version}, '{match.group(2)}', '{_iso(datetime.now(timezone.utc))}');\nCOMMIT;"
            )

    async def schema_version(self) -> int:
        async with self._db.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version") as cursor:
            row = await cursor.fetchone()
        return int(row[0])

    async def _execute(self, sql: str, params: Iterable[Any] = ()) -> int:
        async with self._write:
            cursor = await self._db.execute(sql, tuple(params))
            await self._db.commit()
            return cursor.rowcount

    async def _fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[aiosqlite.Row]:
        async with self._db.execute(sql, tuple(params)) as cursor:
            return list(await cursor.fetchall())

    # ------------------------------------------------------------------ councils

    async def save_council_started(self, request: CouncilRequest) -> None:
        o = request.origin
        await self._execute(
            """INSERT OR REPLACE INTO councils (id, created_at, status, question, history, platform, workspace_id,
               channel_id, channel_key, thread_id, user_id, user_name, members, chairman, config)
               VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (
                request.council_id, _iso(request.created_at), request.question,
                _dumps([t.model_dump(mode="json") for t in request.history]), o.platform.value, o.workspace_id,
                o.channel_id, o.channel_key, o.thread_id, o.user_id, o.user_name,
                _dumps(request.config.members), request.config.chairman, request.config.model_dump_json(),
            ),
        )

    async def save_result(self, result: CouncilResult) -> None:
        async with self._write:
            try:
                await self._db.execute("BEGIN")
                await self._write_result(result)
                await self._db.commit()
            except BaseException:
                await self._db.rollback()
                raise

    async def save_results(self, results: Iterable[CouncilResult]) -> None:
        """Bulk import (benchmarks, migrations from other tools): one transaction for all."""
        async with self._write:
            await self._db.execute("BEGIN")
            try:
                for result in results:
                    await self._write_result(result)
                await self._db.commit()
            except BaseException:
                await self._db.rollback()
                raise

    async def _write_result(self, result: CouncilResult) -> None:
        db, cid = self._db, result.council_id
        request, o = result.request, result.request.origin
        winner = None
        if result.aggregate and result.aggregate.entries and result.aggregate.entries[0].average_rank is not None:
            winner = result.aggregate.entries[0].model
        await db.execute("DELETE FROM councils WHERE id = ?", (cid,))
        await db.execute(
            """INSERT INTO councils (id, created_at, finished_at, status, question, history, platform, workspace_id,
               channel_id, channel_key, thread_id, user_id, user_name, members, chairman, config, winner, agreement_w,
               error, notices, timings, prompt_tokens, completion_tokens, cost_usd, duration_s, result)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (
                cid, _iso(request.created_at), _iso(result.finished_at), result.status.value, request.question,
                _dumps([t.model_dump(mode="json") for t in request.history]), o.platform.value, o.workspace_id,
                o.channel_id, o.channel_key, o.thread_id, o.user_id, o.user_name, _dumps(request.config.members),
                request.config.chairman, request.config.model_dump_json(), winner,
                result.aggregate.agreement_w if result.aggregate else None,
                result.error.model_dump_json() if result.error else None, _dumps(result.notices),
                _dumps(result.timings), result.usage.prompt_tokens, result.usage.completion_tokens,
                result.usage.cost_usd, result.timings.get("total_s"), result.model_dump_json(),
            ),
        )
        await db.executemany(
            "INSERT INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (cid, a.model, a.label, a.text, *_error_cols(a.error), a.latency_s, *_usage_cols(a.usage))
                for a in result.answers
            ],
        )
        await db.executemany(
            "INSERT INTO reviews VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    cid, r.reviewer, r.text, _dumps(r.shown_labels), _dumps(r.ballot_labels), _dumps(r.ballot_models),
                    r.parse_status.value, *_error_cols(r.error), r.latency_s, *_usage_cols(r.usage),
                )
                for r in result.reviews
            ],
        )
        await db.executemany(
            "INSERT INTO label_map VALUES (?, ?, ?)", [(cid, label, model) for label, model in result.label_to_model.items()]
        )
        if result.aggregate:
            await db.executemany(
                "INSERT INTO aggregates VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (cid, e.model, e.label, e.position, e.average_rank, e.rankings_count, e.borda, e.condorcet_wins, e.first_place_votes)
                    for e in result.aggregate.entries
                ],
            )
        if result.synthesis:
            s = result.synthesis
            await db.execute(
                "INSERT INTO synthesis VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (cid, s.model, s.text, int(s.by_chairman), s.note, s.latency_s, *_usage_cols(s.usage)),
            )

    async def get_result(self, council_id: str) -> CouncilResult | None:
        rows = await self._fetchall("SELECT result FROM councils WHERE id = ?", (council_id,))
        if not rows or rows[0]["result"] is None:
            return None
        return CouncilResult.model_validate_json(rows[0]["result"])

    async def mark_interrupted(self) -> int:
        """Councils still 'running' at start-up were cut off by a restart: say so, keep them."""
        rows = await self._fetchall("SELECT * FROM councils WHERE status = 'running'")
        for row in rows:
            request = _request_from_row(row)
            result = CouncilResult(
                council_id=row["id"],
                request=request,
                status=CouncilStatus.FAILED,
                error=ErrorInfo(kind=ErrorKind.CANCELLED, message="The bot restarted while this council was running."),
            )
            await self.save_result(result)
        return len(rows)

    async def list_councils(
        self, *, platform=None, workspace_id=None, channel_id=None, user_id=None, limit: int = 20, offset: int = 0
    ) -> list[CouncilSummary]:
        where, params = _filters(platform, workspace_id, channel_id, user_id)
        rows = await self._fetchall(
            f"""SELECT id, created_at, question, status, members, chairman, winner, agreement_w, cost_usd, duration_s,
                       platform, workspace_id, channel_id, thread_id, user_id, user_name
                FROM councils WHERE {where} ORDER BY created_at DESC LIMIT ? OFFSET ?""",
            (*params, limit, offset),
        )
        return [
            CouncilSummary(
                council_id=r["id"],
                created_at=datetime.fromisoformat(r["created_at"]),
                question=r["question"],
                status=CouncilStatus(r["status"]) if r["status"] != "running" else CouncilStatus.OK,
                members=json.loads(r["members"]),
                chairman=r["chairman"],
                winner=r["winner"],
                agreement_w=r["agreement_w"],
                cost_usd=r["cost_usd"],
                duration_s=r["duration_s"],
                origin=Origin(
                    platform=r["platform"], workspace_id=r["workspace_id"], channel_id=r["channel_id"],
                    thread_id=r["thread_id"], user_id=r["user_id"], user_name=r["user_name"],
                ),
            )
            for r in rows
        ]

    async def ballots(self, *, platform=None, workspace_id=None, channel_id=None) -> list[StoredBallot]:
        where, params = _filters(platform, workspace_id, channel_id, prefix="c.")
        rows = await self._fetchall(
            f"""SELECT r.council_id, r.reviewer, r.ballot_models FROM reviews r JOIN councils c ON c.id = r.council_id
                WHERE {where} AND r.ballot_models != '[]'""",
            params,
        )
        return [StoredBallot(council_id=r[0], reviewer=r[1], ballot_models=json.loads(r[2])) for r in rows]

    async def model_stats(self, *, platform=None, workspace_id=None, channel_id=None) -> dict[str, ModelStats]:
        where, params = _filters(platform, workspace_id, channel_id, prefix="c.")
        stats: dict[str, ModelStats] = {}
        for r in await self._fetchall(
            f"""SELECT a.model, COUNT(DISTINCT a.council_id), SUM(a.error_kind IS NOT NULL), AVG(a.latency_s),
                       SUM(a.cost_usd)
                FROM answers a JOIN councils c ON c.id = a.council_id WHERE {where} GROUP BY a.model""",
            params,
        ):
            stats[r[0]] = ModelStats(model=r[0], councils=r[1], failures=r[2] or 0, average_latency_s=r[3], cost_usd=r[4])
        for r in await self._fetchall(
            f"""SELECT g.model, SUM(g.position = 1 AND g.average_rank IS NOT NULL), AVG(g.average_rank)
                FROM aggregates g JOIN councils c ON c.id = g.council_id WHERE {where} GROUP BY g.model""",
            params,
        ):
            entry = stats.setdefault(r[0], ModelStats(model=r[0]))
            entry.first_places, entry.mean_average_rank = r[1] or 0, r[2]
        return stats

    async def prune(self, older_than: datetime) -> int:
        return await self._execute("DELETE FROM councils WHERE created_at < ?", (_iso(older_than),))

    async def spent_since(self, channel_key: str | None, since: datetime) -> float:
        sql = "SELECT COALESCE(SUM(cost_usd), 0) FROM councils WHERE created_at >= ?"
        params: list[Any] = [_iso(since)]
        if channel_key is not None:
            sql += " AND channel_key = ?"
            params.append(channel_key)
        rows = await self._fetchall(sql, params)
        return float(rows[0][0])

    async def usage_by_day(self, channel_key: str | None = None, days: int = 30) -> list[DailyUsage]:
        since = datetime.now(timezone.utc) - timedelta(days=days)
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
            members=json.loads(r["members"]) if r["members"] else None,
            chairman=r["chairman"],
            user_limit_per_hour=r["user_limit_per_hour"],
            channel_limit_per_hour=r["channel_limit_per_hour"],
            daily_budget_usd=r["daily_budget_usd"],
        )

    async def put_channel_settings(self, settings: ChannelSettings, actor_id: str) -> None:
        await self._execute(
            "INSERT OR REPLACE INTO channel_settings VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                settings.channel_key, _dumps(settings.members) if settings.members is not None else None,
                settings.chairman, settings.user_limit_per_hour, settings.channel_limit_per_hour,
                settings.daily_budget_usd, _iso(datetime.now(timezone.utc)), actor_id,
            ),
        )

    async def delete_channel_settings(self, channel_key: str) -> None:
        await self._execute("DELETE FROM channel_settings WHERE channel_key = ?", (channel_key,))

    async def audit(self, channel_key: str, actor_id: str, action: str, detail: dict) -> None:
        await self._execute(
            "INSERT INTO audit_log (at, channel_key, actor_id, action, detail) VALUES (?, ?, ?, ?, ?)",
            (_iso(datetime.now(timezone.utc)), channel_key, actor_id, action, _dumps(detail)),
        )

    async def audit_log(self, channel_key: str | None = None, limit: int = 50) -> list[AuditEntry]:
        sql, params = "SELECT at, channel_key, actor_id, action, detail FROM audit_log", []
        if channel_key is not None:
            sql += " WHERE channel_key = ?"
            params.append(channel_key)
        rows = await self._fetchall(sql + " ORDER BY id DESC LIMIT ?", (*params, limit))
        return [
            AuditEntry(at=datetime.fromisoformat(r[0]), channel_key=r[1], actor_id=r[2], action=r[3], detail=json.loads(r[4]))
            for r in rows
        ]

    # ------------------------------------------------------------------ events and rate limits

    async def claim_event(self, platform: str, event_id: str) -> bool:
        """True only the first time (platform, event_id) is seen; atomic across tasks."""
        now = time.time()
        claimed = await self._execute(
            "INSERT OR IGNORE INTO processed_events VALUES (?, ?, ?)", (platform, event_id, now)
        )
        self._claims += 1
        if self._claims % 500 == 0:
            await self._execute("DELETE FROM processed_events WHERE at < ?", (now - _EVENT_TTL_S,))
        return claimed == 1

    async def record_hit(self, key: str, at: float) -> None:
        await self._execute("INSERT INTO rate_hits VALUES (?, ?)", (key, at))

    async def record_hits(self, keys: Iterable[str], at: float, *, forget_before: float | None = None) -> None:
        async with self._write:
            await self._db.executemany("INSERT INTO rate_hits VALUES (?, ?)", [(k, at) for k in keys])
            if forget_before is not None:
                await self._db.execute("DELETE FROM rate_hits WHERE at < ?", (forget_before,))
            await self._db.commit()

    async def count_hits(self, key: str, since: float) -> int:
        rows = await self._fetchall("SELECT COUNT(*) FROM rate_hits WHERE key = ? AND at >= ?", (key, since))
        return int(rows[0][0])

    async def oldest_hit_since(self, key: str, since: float) -> float | None:
        rows = await self._fetchall("SELECT MIN(at) FROM rate_hits WHERE key = ? AND at >= ?", (key, since))
        return rows[0][0]

    async def hits_since(self, key: str, since: float) -> list[float]:
        rows = await self._fetchall("SELECT at FROM rate_hits WHERE key = ? AND at >= ? ORDER BY at", (key, since))
        return [r[0] for r in rows]


def _error_cols(error: ErrorInfo | None) -> tuple[str | None, str | None, int | None]:
    return (error.kind.value, error.message, error.status) if error else (None, None, None)


def _usage_cols(usage: Usage) -> tuple[int, int, float | None]:
    return usage.prompt_tokens, usage.completion_tokens, usage.cost_usd


def _request_from_row(row: aiosqlite.Row) -> CouncilRequest:
    from core.models import ConversationTurn, CouncilConfig

    return CouncilRequest(
        council_id=row["id"],
        question=row["question"],
        config=CouncilConfig.model_validate_json(row["config"]),
        history=[ConversationTurn.model_validate(t) for t in json.loads(row["history"])],
        origin=Origin(
            platform=row["platform"], workspace_id=row["workspace_id"], channel_id=row["channel_id"],
            thread_id=row["thread_id"], user_id=row["user_id"], user_name=row["user_name"],
        ),
        created_at=datetime.fromisoformat(row["created_at"]),
    )
