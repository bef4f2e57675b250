"""Councils and everything they produced: the `councils` row (with the full result as JSON for an
exact round trip) and its normalised children (answers, reviews with ballots, label map,
aggregates, synthesis) for history, leaderboards and anyone querying the database with SQL."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from core.models import (
    ConversationTurn,
    CouncilConfig,
    CouncilRequest,
    CouncilResult,
    CouncilStatus,
    CouncilSummary,
    DailyUsage,
    ErrorInfo,
    ErrorKind,
    MemberAnswer,
    Origin,
    Review,
    Synthesis,
    UnfinishedCouncil,
    Usage,
)
from core.storage import totals
from core.storage.attachments_sources import with_material, write_material
from core.storage.database import SQLITE, Database, Row, Transaction
from core.storage.reconnect import reconnecting
from core.storage.values import dumps, filters, insert_sql, iso

RUNNING = "running"  # councils.status while a council has not finished (not a CouncilStatus)
# A council whose owner holds no live lease at the time given as its one parameter.
OWNER_GONE = "(owner_id IS NULL OR owner_id NOT IN (SELECT owner_id FROM council_owners WHERE lease_until >= ?))"


class CouncilRepository:
    def __init__(self, db: Database):
        self._db = db

    async def save_started(self, request: CouncilRequest, owner_id: str | None = None) -> None:
        """Record a council as running, owned by `owner_id` (see OwnerRepository). A council already
        stored (running or finished) is left as is."""
        row = {**_request_columns(request), "status": RUNNING, "owner_id": owner_id}
        await self._db.execute(insert_sql("councils", row) + " ON CONFLICT (id) DO NOTHING", row)

    @reconnecting
    async def save(self, results: Iterable[CouncilResult]) -> None:
        """Store finished councils, all tables in one transaction; saving again replaces one."""
        async with self._db.transaction() as tx:
            for result in results:
                await write_result(tx, result)

    async def get(self, council_id: str) -> CouncilResult | None:
        """The stored result, exactly as saved; None if unknown or still running."""
        rows = await self._db.fetchall("SELECT result FROM councils WHERE id = ?", (council_id,))
        if not rows or rows[0]["result"] is None:
            return None
        return CouncilResult.model_validate_json(rows[0]["result"])

    async def ids_starting_with(self, prefix: str, limit: int = 2) -> list[str]:
        """Up to `limit` ids of stored (finished) councils that start with `prefix`, a run of hex
        digits (council ids are hex, so the pattern holds no LIKE wildcard)."""
        rows = await self._db.fetchall(
            "SELECT id FROM councils WHERE id LIKE ? AND result IS NOT NULL ORDER BY id LIMIT ?",
            (prefix + "%", limit),
        )
        return [row["id"] for row in rows]

    @reconnecting
    async def mark_interrupted(self, now: float | None = None) -> int:
        """Store as failed, with why, the running councils whose owner stopped renewing its lease
        (or that have no owner: written before owners existed) and that cannot be resumed (no
        job). Councils of live owners are left alone; expired leases are dropped. One transaction.
        Returns how many were marked."""
        now = time.time() if now is None else now
        async with self._db.transaction() as tx:
            await tx.lock("council:owners")
            # Councils with a job (migrations/0009) are resumed instead, by the queue or at restart.
            rows = await tx.fetchall(
                f"""SELECT * FROM councils WHERE status = ? AND {OWNER_GONE}
                   AND id NOT IN (SELECT council_id FROM council_jobs)""",
                (RUNNING, now),
            )
            for row in rows:
                await write_result(
                    tx,
                    CouncilResult(
                        council_id=row["id"],
                        request=request_from_row(row),
                        status=CouncilStatus.FAILED,
                        error=ErrorInfo(
                            kind=ErrorKind.CANCELLED,
                            message="The bot stopped (or restarted) while this council was running.",
                        ),
                        notices=["Interrupted: the process running this council stopped; ask again to rerun it."],
                    ),
                )
            await tx.execute("DELETE FROM council_owners WHERE lease_until < ?", (now,))
        return len(rows)

    async def history(
        self, *, platform=None, workspace_id=None, channel_id=None, user_id=None, limit: int = 20, offset: int = 0
    ) -> list[CouncilSummary]:
        """Finished councils (any status but running), newest first; None filters match anything."""
        where, params = filters(platform, workspace_id, channel_id, user_id)
        rows = await self._db.fetchall(
            f"""SELECT {SUMMARY_COLUMNS} FROM councils WHERE {where} AND status != ?
                ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?""",
            (*params, RUNNING, max(0, limit), max(0, offset)),
        )
        summaries = [summary_from_row(r) for r in rows]
        return await with_material(self._db, summaries)

    async def unfinished(
        self, *, now: float | None = None, platform=None, workspace_id=None, channel_id=None, user_id=None, limit=20
    ) -> list[UnfinishedCouncil]:
        """Councils stored as running, newest first, each interrupted when `mark_interrupted` would
        mark it (its owner's lease ran out, no job to resume it). Reads only: nothing is marked."""
        now = time.time() if now is None else now
        where, params = filters(platform, workspace_id, channel_id, user_id)
        rows = await self._db.fetchall(
            f"""SELECT id, created_at, question, members, chairman, config, platform, workspace_id, channel_id,
                       thread_id, user_id, user_name,
                       CASE WHEN {OWNER_GONE} AND id NOT IN (SELECT council_id FROM council_jobs)
                            THEN 1 ELSE 0 END AS interrupted
                FROM councils WHERE {where} AND status = ? ORDER BY created_at DESC, id DESC LIMIT ?""",
            (now, *params, RUNNING, max(0, limit)),
        )
        return [
            UnfinishedCouncil(
                council_id=r["id"],
                created_at=datetime.fromisoformat(r["created_at"]),
                question=r["question"],
                members=json.loads(r["members"]),
                chairman=r["chairman"],
                mode=CouncilConfig.model_validate_json(r["config"]).mode,
                origin=_origin_from_row(r),
                interrupted=bool(r["interrupted"]),
            )
            for r in rows
        ]

    @reconnecting
    async def prune(self, older_than: datetime) -> int:
        """Delete councils created before `older_than` (with all their rows, and what they added to
        the leaderboard totals). Returns how many."""
        async with self._db.transaction() as tx:
            rows = await tx.fetchall(
                "SELECT result FROM councils WHERE created_at < ? AND status != ? AND result IS NOT NULL",
                (iso(older_than), RUNNING),
            )
            for row in rows:
                await totals.apply(tx, CouncilResult.model_validate_json(row[0]), -1)
            removed = await tx.execute(
                "DELETE FROM councils WHERE created_at < ? AND status != ?", (iso(older_than), RUNNING)
            )
            if self._db.dialect == SQLITE:  # the search index's numbers of the councils now gone
                await tx.execute("DELETE FROM council_search_rows WHERE council_id NOT IN (SELECT id FROM councils)")
            return removed

    async def spent_since(self, channel_key: str | None, since: datetime) -> float:
        """Total cost (USD) of councils created since `since`, for one channel key or all (None)."""
        sql = "SELECT COALESCE(SUM(cost_usd), 0) FROM councils WHERE created_at >= ?"
        params: list[Any] = [iso(since)]
        if channel_key is not None:
            sql += " AND channel_key = ?"
            params.append(channel_key)
        rows = await self._db.fetchall(sql, params)
        return float(rows[0][0])

    async def usage_by_day(self, channel_key: str | None = None, days: int = 30) -> list[DailyUsage]:
        """Councils, tokens and cost per UTC day over the last `days` days, oldest first (empty days omitted)."""
        since = datetime.now(UTC) - timedelta(days=days)
        sql = """SELECT substr(created_at, 1, 10) AS day, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens),
                        COALESCE(SUM(cost_usd), 0) FROM councils WHERE created_at >= ?"""
        params: list[Any] = [iso(since)]
        if channel_key is not None:
            sql += " AND channel_key = ?"
            params.append(channel_key)
        rows = await self._db.fetchall(sql + " GROUP BY day ORDER BY day", params)
        return [
            DailyUsage(
                day=r[0], councils=r[1], prompt_tokens=int(r[2] or 0), completion_tokens=int(r[3] or 0), cost_usd=r[4]
            )
            for r in rows
        ]


async def write_result(tx: Transaction, result: CouncilResult) -> None:
    """Replace the council's rows with `result`'s (the caller holds the transaction)."""
    await _withdraw_previous(tx, result.council_id)
    await tx.execute("DELETE FROM councils WHERE id = ?", (result.council_id,))  # cascades to every child table
    await _insert(tx, "councils", [_council_row(result)])
    await _insert(tx, "answers", [_answer_row(result.council_id, i, a) for i, a in enumerate(result.answers)])
    await _insert(tx, "reviews", [_review_row(result.council_id, i, r) for i, r in enumerate(result.reviews)])
    await _insert(tx, "label_map", _label_rows(result))
    await _insert(tx, "aggregates", _aggregate_rows(result))
    await _insert(tx, "revisions", _revision_rows(result))
    await totals.apply(tx, result, 1)
    if result.synthesis:
        await _insert(tx, "synthesis", [_synthesis_row(result.council_id, result.synthesis)])
    await write_material(tx, result)


async def _withdraw_previous(tx: Transaction, council_id: str) -> None:
    """Replacing a finished council: its old contribution leaves the leaderboard totals."""
    previous = await tx.fetchall("SELECT result FROM councils WHERE id = ? AND result IS NOT NULL", (council_id,))
    if previous:
        await totals.apply(tx, CouncilResult.model_validate_json(previous[0][0]), -1)


async def _insert(tx: Transaction, table: str, rows: Sequence[dict[str, Any]]) -> None:
    """Insert rows that share one set of keys, each key a column (nothing to do without rows)."""
    if rows:
        await tx.executemany(insert_sql(table, rows[0]), rows)


def _council_row(result: CouncilResult) -> dict[str, Any]:
    aggregate = result.aggregate
    return {
        **_request_columns(result.request),
        "finished_at": iso(result.finished_at),
        "status": result.status.value,
        "winner": _winner(result),
        "agreement_w": aggregate.agreement_w if aggregate else None,
        "consensus": aggregate.consensus if aggregate else None,
        "disagreement": result.disagreement.model_dump_json() if result.disagreement else None,
        "error": result.error.model_dump_json() if result.error else None,
        "notices": dumps(result.notices),
        "timings": dumps(result.timings),
        **_usage_columns(result.usage),
        "duration_s": result.timings.get("total_s"),
        "result": result.model_dump_json(),
    }


def _winner(result: CouncilResult) -> str | None:
    """The first-placed model, when a ballot actually ranked it."""
    aggregate = result.aggregate
    if aggregate and aggregate.entries and aggregate.entries[0].average_rank is not None:
        return aggregate.entries[0].model
    return None


def _answer_row(council_id: str, position: int, a: MemberAnswer) -> dict[str, Any]:
    return {
        "council_id": council_id,
        "position": position,
        "model": a.model,
        "label": a.label,
        "text": a.text,
        **_error_columns(a.error),
        "latency_s": a.latency_s,
        **_usage_columns(a.usage),
    }


def _review_row(council_id: str, position: int, r: Review) -> dict[str, Any]:
    return {
        "council_id": council_id,
        "position": position,
        "reviewer": r.reviewer,
        "text": r.text,
        "shown_labels": dumps(r.shown_labels),
        "ballot_labels": dumps(r.ballot_labels),
        "ballot_models": dumps(r.ballot_models),
        "parse_status": r.parse_status.value,
        "scores": dumps(r.scores) if r.scores else None,
        **_error_columns(r.error),
        "latency_s": r.latency_s,
        **_usage_columns(r.usage),
    }


def _revision_rows(result: CouncilResult) -> list[dict[str, Any]]:
    return [
        {
            "council_id": result.council_id,
            "round": r.round,
            "position": position,
            "seat": r.seat,
            "model": r.model,
            "text": r.text,
            "kept": int(r.kept),
            "moved": int(r.moved),
            "toward": dumps(r.toward),
            "new_share": r.new_share,
            "reason": r.reason,
            **_error_columns(r.error),
            "latency_s": r.latency_s,
            **_usage_columns(r.usage),
        }
        for revision_round in result.rounds
        for position, r in enumerate(revision_round.revisions)
    ]


def _label_rows(result: CouncilResult) -> list[dict[str, Any]]:
    return [
        {"council_id": result.council_id, "label": label, "model": model}
        for label, model in result.label_to_model.items()
    ]


def _aggregate_rows(result: CouncilResult) -> list[dict[str, Any]]:
    entries = result.aggregate.entries if result.aggregate else []
    return [
        {"council_id": result.council_id, **e.model_dump(include=_AGGREGATE_FIELDS), "condorcet_wins": e.copeland}
        for e in entries
    ]


def _synthesis_row(council_id: str, s: Synthesis) -> dict[str, Any]:
    return {
        "council_id": council_id,
        "model": s.model,
        "text": s.text,
        "by_chairman": int(s.by_chairman),
        "note": s.note,
        "latency_s": s.latency_s,
        **_usage_columns(s.usage),
    }


_AGGREGATE_FIELDS = {
    "model",
    "label",
    "position",
    "average_rank",
    "rankings_count",
    "borda",
    "first_place_votes",
}  # and Copeland's score, in the column named `condorcet_wins` since migration 0001 (SQL readers use it)


def _request_columns(request: CouncilRequest) -> dict[str, Any]:
    o = request.origin
    return {
        "id": request.council_id,
        "created_at": iso(request.created_at),
        "question": request.question,
        "history": dumps([t.model_dump(mode="json") for t in request.history]),
        "platform": o.platform.value,
        "workspace_id": o.workspace_id,
        "channel_id": o.channel_id,
        "channel_key": o.channel_key,
        "thread_id": o.thread_id,
        "user_id": o.user_id,
        "user_name": o.user_name,
        "members": dumps(request.config.members),
        "chairman": request.config.chairman,
        "config": request.config.model_dump_json(),
    }


def _error_columns(error: ErrorInfo | None) -> dict[str, Any]:
    if error is None:
        return {"error_kind": None, "error_message": None, "error_status": None}
    return {"error_kind": error.kind.value, "error_message": error.message, "error_status": error.status}


def _usage_columns(usage: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cost_usd": usage.cost_usd,
    }


# The columns `summary_from_row` reads.
SUMMARY_COLUMNS = """id, created_at, question, status, members, chairman, winner, agreement_w, consensus, cost_usd,
                     duration_s, platform, workspace_id, channel_id, thread_id, user_id, user_name, config"""


def summary_from_row(r: Row) -> CouncilSummary:
    return CouncilSummary(
        council_id=r["id"],
        created_at=datetime.fromisoformat(r["created_at"]),
        question=r["question"],
        status=CouncilStatus(r["status"]),
        members=json.loads(r["members"]),
        chairman=r["chairman"],
        winner=r["winner"],
        agreement_w=r["agreement_w"],
        consensus=r["consensus"],
        cost_usd=r["cost_usd"],
        duration_s=r["duration_s"],
        origin=_origin_from_row(r),
        mode=CouncilConfig.model_validate_json(r["config"]).mode,
    )


def _origin_from_row(row: Row) -> Origin:
    return Origin(
        platform=row["platform"],
        workspace_id=row["workspace_id"],
        channel_id=row["channel_id"],
        thread_id=row["thread_id"],
        user_id=row["user_id"],
        user_name=row["user_name"],
    )


def request_from_row(row: Row) -> CouncilRequest:
    return CouncilRequest(
        council_id=row["id"],
        question=row["question"],
        config=CouncilConfig.model_validate_json(row["config"]),
        history=[ConversationTurn.model_validate(t) for t in json.loads(row["history"])],
        origin=_origin_from_row(row),
        created_at=datetime.fromisoformat(row["created_at"]),
    )
