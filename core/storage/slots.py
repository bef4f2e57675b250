"""Running-council slots shared by every process on one database (migrations/0010_council_slots.sql):
the global concurrency cap. A slot counts only while its owner's lease is live, so the slots of a
process that died are freed by the next process that takes one."""

from __future__ import annotations

import time

from core.storage.database import Database
from core.storage.reconnect import reconnecting

_LOCK = "council-slots"


class SlotRepository:
    def __init__(self, db: Database):
        self._db = db

    @reconnecting
    async def take(self, slot_id: str, owner_id: str, limit: int, now: float | None = None) -> bool:
        """Take `slot_id` for `owner_id` when fewer than `limit` live slots are taken (True), else
        take nothing (False). Idempotent for a slot already held. One transaction under one
        advisory lock on PostgreSQL (the file's write lock on SQLite): two processes can never
        both take the last slot."""
        now = time.time() if now is None else now
        async with self._db.transaction() as tx:
            await tx.lock(_LOCK)
            await tx.execute(
                "DELETE FROM council_slots WHERE owner_id NOT IN "
                "(SELECT owner_id FROM council_owners WHERE lease_until >= ?)",
                (now,),
            )
            held = await tx.fetchall("SELECT 1 FROM council_slots WHERE slot_id = ?", (slot_id,))
            if held:
                return True
            taken = (await tx.fetchall("SELECT COUNT(*) FROM council_slots"))[0][0]
            if taken >= limit:
                return False
            await tx.execute(
                "INSERT INTO council_slots (slot_id, owner_id, taken_at) VALUES (?, ?, ?)", (slot_id, owner_id, now)
            )
        return True

    async def give_back(self, slot_id: str) -> None:
        await self._db.execute("DELETE FROM council_slots WHERE slot_id = ?", (slot_id,))

    async def taken(self, now: float | None = None) -> int:
        """Slots held by owners with a live lease (doctor, tests)."""
        now = time.time() if now is None else now
        rows = await self._db.fetchall(
            "SELECT COUNT(*) FROM council_slots s JOIN council_owners o ON o.owner_id = s.owner_id "
            "WHERE o.lease_until >= ?",
            (now,),
        )
        return int(rows[0][0])
