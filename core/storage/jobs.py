"""Durable councils (migrations/0009_durable_councils.sql): the job of a council that any worker
can run and resume, its completed steps, and the one claim that lets its answer be posted once."""

from __future__ import annotations

import json
import time
from typing import Any

from core.models import (
    ControlAction,
    CouncilCheckpoint,
    CouncilJob,
    CouncilRequest,
    Destination,
    MemberAnswer,
    Review,
    Revision,
)
from core.storage.councils import OWNER_GONE, RUNNING
from core.storage.database import Database
from core.storage.reconnect import reconnecting

STAGE_ANSWERS, STAGE_REVIEWS, STAGE_REVISIONS = 1, 2, 3
# The format of what a job stores (its request, destination and steps), written with each job
# (migration 0015). Raise it when a release changes that format in a way older workers cannot
# read (a new required field: the models forbid unknown ones); they then leave such jobs alone.
PAYLOAD_VERSION = 1
# Request fields added since payload version 1, by the part of the request that holds them. They are
# stored apart (`request_later`, migration 0019), so that the request column stays readable by the
# releases before them, which run the council without them (the rubric: a council without scores)
# instead of failing the job. Add a field here when it joins a stored request.
LATER_FIELDS: dict[str, tuple[str, ...]] = {
    "config": (
        "rubric", "rounds", "lenses", "samples", "sample_temperature", "unsure_below", "strategy", "unsure_mention",
    ),
}  # fmt: skip


def split_request(request: CouncilRequest) -> tuple[str, str | None]:
    """(the request as every release reads it, the later fields or None)."""
    data = request.model_dump(mode="json")
    later: dict[str, dict[str, Any]] = {}
    for part, names in LATER_FIELDS.items():
        for name in names:
            value = data[part].pop(name, None)
            if value is not None:
                later.setdefault(part, {})[name] = value
    return json.dumps(data), json.dumps(later) if later else None


def joined_request(request: str, later: str | None) -> CouncilRequest:
    data = json.loads(request)
    for part, fields in json.loads(later or "{}").items():
        data[part].update(fields)
    return CouncilRequest.model_validate(data)


class JobTooNew(RuntimeError):
    """A job written by a newer version of the bot: this worker leaves it for a newer one."""

    def __init__(self, council_id: str, version: int) -> None:
        super().__init__(
            f"council {council_id} was queued by a newer version of the bot (payload version {version}, "
            f"this one knows up to {PAYLOAD_VERSION}): left for a newer worker"
        )
        self.version = version


class JobRepository:
    def __init__(self, db: Database):
        self._db = db

    async def save(self, request: CouncilRequest, destination: Destination | None, *, search: bool = False) -> None:
        await self._db.execute(
            """INSERT INTO council_jobs (council_id, request, request_later, destination, search, created_at,
                                          payload_version)
               VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (council_id) DO NOTHING""",
            (
                request.council_id,
                *split_request(request),
                destination.model_dump_json() if destination else None,
                int(search),
                time.time(),
                PAYLOAD_VERSION,
            ),
        )

    async def readable(self, council_id: str) -> None:
        """JobTooNew when the job was written by a newer version of the bot (checked before
        taking it over or reading it: its payload may not parse here)."""
        rows = await self._db.fetchall("SELECT payload_version FROM council_jobs WHERE council_id = ?", (council_id,))
        if rows and int(rows[0][0]) > PAYLOAD_VERSION:
            raise JobTooNew(council_id, int(rows[0][0]))

    async def get(self, council_id: str) -> CouncilJob | None:
        """The job; JobTooNew when a newer version of the bot wrote it."""
        await self.readable(council_id)
        rows = await self._db.fetchall(
            """SELECT request, request_later, destination, search, prepared, control, attempts
               FROM council_jobs WHERE council_id = ?""",
            (council_id,),
        )
        if not rows:
            return None
        row = rows[0]
        return CouncilJob(
            request=joined_request(row["request"], row["request_later"]),
            destination=Destination.model_validate_json(row["destination"]) if row["destination"] else None,
            search=bool(row["search"]),
            prepared=bool(row["prepared"]),
            control=ControlAction(row["control"]) if row["control"] else None,
            attempts=int(row["attempts"]),
        )

    async def save_prepared(self, request: CouncilRequest) -> None:
        """The request once its files and search were read: a resumed council does not read them again."""
        await self._db.execute(
            "UPDATE council_jobs SET request = ?, request_later = ?, prepared = 1 WHERE council_id = ?",
            (*split_request(request), request.council_id),
        )

    async def save_destination(self, council_id: str, destination: Destination) -> None:
        await self._db.execute(
            "UPDATE council_jobs SET destination = ? WHERE council_id = ?",
            (destination.model_dump_json(), council_id),
        )

    async def save_control(self, council_id: str, action: ControlAction) -> bool:
        """Remember a Stop / Synthesize now for a council that is still running (a stop is never
        weakened into a synthesize). False when there is no such running council."""
        changed = await self._db.execute(
            """UPDATE council_jobs SET control = CASE WHEN control = 'stop' THEN 'stop' ELSE ? END
               WHERE council_id = ? AND council_id IN (SELECT id FROM councils WHERE status = ?)""",
            (action.value, council_id, RUNNING),
        )
        return changed > 0

    @reconnecting
    async def take(self, council_id: str, owner_id: str) -> CouncilJob | None:
        """Make `owner_id` the owner of a running council and count the attempt; None when the
        council is no longer running (finished, or unknown); JobTooNew (nothing taken) when a newer
        version of the bot wrote it."""
        await self.readable(council_id)
        async with self._db.transaction() as tx:
            await tx.lock(f"council:job:{council_id}")
            taken = await tx.execute(
                "UPDATE councils SET owner_id = ? WHERE id = ? AND status = ?", (owner_id, council_id, RUNNING)
            )
            if not taken:
                return None
            await tx.execute("UPDATE council_jobs SET attempts = attempts + 1 WHERE council_id = ?", (council_id,))
        return await self.get(council_id)

    async def orphans(self, now: float | None = None) -> list[str]:
        """Running councils with a job whose owner stopped renewing its lease: to be resumed."""
        now = time.time() if now is None else now
        rows = await self._db.fetchall(
            f"""SELECT c.id FROM councils c JOIN council_jobs j ON j.council_id = c.id
               WHERE c.status = ? AND {OWNER_GONE} ORDER BY j.created_at""",
            (RUNNING, now),
        )
        return [row[0] for row in rows]

    async def adopt(self, council_id: str, owner_id: str, now: float | None = None) -> bool:
        """Take an orphan over, only if its owner is still dead (two live processes race for it)."""
        now = time.time() if now is None else now
        taken = await self._db.execute(
            f"UPDATE councils SET owner_id = ? WHERE id = ? AND status = ? AND {OWNER_GONE}",
            (owner_id, council_id, RUNNING, now),
        )
        return taken > 0

    async def save_answer(self, council_id: str, answer: MemberAnswer) -> None:
        # By seat: Self-MoA's samples are one model's answers in several seats (`alpha#1`, `alpha#2`, ...).
        await self._save_step(council_id, STAGE_ANSWERS, answer.seat or answer.model, answer.model_dump_json())

    async def save_review(self, council_id: str, review: Review) -> None:
        await self._save_step(council_id, STAGE_REVIEWS, review.reviewer, review.model_dump_json())

    async def save_revision(self, council_id: str, revision: Revision) -> None:
        await self._save_step(
            council_id, STAGE_REVISIONS, f"{revision.round}:{revision.seat}", revision.model_dump_json()
        )

    async def _save_step(self, council_id: str, stage: int, key: str, payload: str) -> None:
        await self._db.execute(
            """INSERT INTO council_steps (council_id, stage, step_key, payload, saved_at) VALUES (?, ?, ?, ?, ?)
               ON CONFLICT (council_id, stage, step_key) DO NOTHING""",
            (council_id, stage, key, payload, time.time()),
        )

    async def checkpoint(self, council_id: str) -> CouncilCheckpoint:
        rows = await self._db.fetchall(
            "SELECT stage, payload FROM council_steps WHERE council_id = ? ORDER BY saved_at, step_key",
            (council_id,),
        )
        return CouncilCheckpoint(
            answers=[MemberAnswer.model_validate_json(r["payload"]) for r in rows if r["stage"] == STAGE_ANSWERS],
            reviews=[Review.model_validate_json(r["payload"]) for r in rows if r["stage"] == STAGE_REVIEWS],
            revisions=[Revision.model_validate_json(r["payload"]) for r in rows if r["stage"] == STAGE_REVISIONS],
        )

    async def claim_delivery(self, council_id: str, owner_id: str) -> bool:
        """True for exactly one caller per council, across every process: that one posts the answer."""
        claimed = await self._db.execute(
            """INSERT INTO council_deliveries (council_id, owner_id, delivered_at) VALUES (?, ?, ?)
               ON CONFLICT (council_id) DO NOTHING""",
            (council_id, owner_id, time.time()),
        )
        return claimed == 1

    async def delivered(self, council_id: str) -> bool:
        rows = await self._db.fetchall("SELECT 1 FROM council_deliveries WHERE council_id = ?", (council_id,))
        return bool(rows)

    @reconnecting
    async def forget_finished(self) -> int:
        """Jobs and delivery claims of councils that are no longer stored (pruned)."""
        async with self._db.transaction() as tx:
            await tx.execute("DELETE FROM council_deliveries WHERE council_id NOT IN (SELECT id FROM councils)")
            return await tx.execute("DELETE FROM council_jobs WHERE council_id NOT IN (SELECT id FROM councils)")
