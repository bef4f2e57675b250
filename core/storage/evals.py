"""`council eval` runs and their samples (migrations/0012_eval_runs.sql; each council sample's
consensus, 0025_measured_doubt.sql). A sample is written
the moment it is scored, one row each, so a run killed at any point keeps every answer it paid for."""

from __future__ import annotations

import json
import time
import uuid
from datetime import UTC, datetime

from core.models.eval import EvalPlan, EvalRunSummary, EvalSample
from core.storage.database import Database


class EvalRepository:
    def __init__(self, db: Database):
        self._db = db

    async def unfinished(self, fingerprint: str) -> tuple[str, EvalPlan] | None:
        """The newest running run with this fingerprint (same dataset, configurations, seats)."""
        rows = await self._db.fetchall(
            "SELECT id, plan FROM eval_runs WHERE fingerprint = ? AND status = 'running' ORDER BY created_at DESC",
            (fingerprint,),
        )
        if not rows:
            return None
        return rows[0]["id"], EvalPlan.model_validate_json(rows[0]["plan"])

    async def abandon(self, fingerprint: str) -> int:
        """`--new`: the unfinished runs of this fingerprint are left as they are, marked abandoned."""
        return await self._db.execute(
            "UPDATE eval_runs SET status = 'abandoned' WHERE fingerprint = ? AND status = 'running'", (fingerprint,)
        )

    async def create(self, fingerprint: str, dataset: str, items: int, configs: list[str], plan: EvalPlan) -> str:
        run_id = uuid.uuid4().hex[:12]
        await self._db.execute(
            """INSERT INTO eval_runs (id, fingerprint, dataset, items, configs, plan, status, created_at)
               VALUES (?, ?, ?, ?, ?, ?, 'running', ?)""",
            (run_id, fingerprint, dataset, items, json.dumps(configs), plan.model_dump_json(), time.time()),
        )
        return run_id

    async def save_plan(self, run_id: str, plan: EvalPlan) -> None:
        await self._db.execute("UPDATE eval_runs SET plan = ? WHERE id = ?", (plan.model_dump_json(), run_id))

    async def finish(self, run_id: str, report_json: str) -> None:
        await self._db.execute(
            "UPDATE eval_runs SET status = 'finished', report = ?, finished_at = ? WHERE id = ?",
            (report_json, time.time(), run_id),
        )

    async def record(self, run_id: str, sample: EvalSample) -> None:
        """Store one scored sample (scoring it again replaces it)."""
        await self._db.execute(
            """INSERT INTO eval_samples (run_id, config, item_id, position, answer, correct, calls, prompt_tokens,
                   completion_tokens, cost_usd, latency_s, escalated, error, scored_at, consensus, agreement_w)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT (run_id, config, item_id) DO UPDATE SET
                   answer = excluded.answer, correct = excluded.correct, calls = excluded.calls,
                   prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens,
                   cost_usd = excluded.cost_usd, latency_s = excluded.latency_s, escalated = excluded.escalated,
                   error = excluded.error, scored_at = excluded.scored_at, consensus = excluded.consensus,
                   agreement_w = excluded.agreement_w""",
            (
                run_id,
                sample.config,
                sample.item_id,
                sample.position,
                sample.answer,
                int(sample.correct),
                sample.calls,
                sample.prompt_tokens,
                sample.completion_tokens,
                sample.cost_usd,
                sample.latency_s,
                None if sample.escalated is None else int(sample.escalated),
                sample.error,
                time.time(),
                sample.consensus,
                sample.agreement_w,
            ),
        )

    async def samples(self, run_id: str, config: str | None = None) -> list[EvalSample]:
        sql = "SELECT * FROM eval_samples WHERE run_id = ?"
        params: tuple = (run_id,)
        if config is not None:
            sql += " AND config = ?"
            params += (config,)
        rows = await self._db.fetchall(sql + " ORDER BY config, position", params)
        return [
            EvalSample(
                config=row["config"],
                item_id=row["item_id"],
                position=row["position"],
                answer=row["answer"],
                correct=bool(row["correct"]),
                calls=row["calls"],
                prompt_tokens=row["prompt_tokens"],
                completion_tokens=row["completion_tokens"],
                cost_usd=row["cost_usd"],
                latency_s=row["latency_s"],
                escalated=None if row["escalated"] is None else bool(row["escalated"]),
                error=row["error"],
                consensus=row["consensus"],
                agreement_w=row["agreement_w"],
            )
            for row in rows
        ]

    async def history(self, limit: int = 20) -> list[EvalRunSummary]:
        rows = await self._db.fetchall(
            """SELECT r.id, r.created_at, r.dataset, r.items, r.configs, r.status,
                      (SELECT COUNT(*) FROM eval_samples s WHERE s.run_id = r.id) AS samples
               FROM eval_runs r ORDER BY r.created_at DESC LIMIT ?""",
            (limit,),
        )
        return [
            EvalRunSummary(
                id=row["id"],
                created_at=datetime.fromtimestamp(row["created_at"], UTC),
                dataset=row["dataset"],
                items=row["items"],
                configs=json.loads(row["configs"]),
                status=row["status"],
                samples=row["samples"],
                expected=row["items"] * len(json.loads(row["configs"])),
            )
            for row in rows
        ]

    async def finished(self, limit: int = 50) -> list[tuple[str, EvalPlan]]:
        """(id, plan) of the newest finished runs, newest first (their reports: `report`)."""
        rows = await self._db.fetchall(
            "SELECT id, plan FROM eval_runs WHERE status = 'finished' AND report IS NOT NULL "
            "ORDER BY finished_at DESC LIMIT ?",
            (limit,),
        )
        return [(row["id"], EvalPlan.model_validate_json(row["plan"])) for row in rows]

    async def report(self, run_id: str) -> str | None:
        rows = await self._db.fetchall("SELECT report FROM eval_runs WHERE id = ?", (run_id,))
        return rows[0]["report"] if rows else None
