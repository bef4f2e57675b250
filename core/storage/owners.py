"""Leases of the processes that run councils (migrations/0003_council_owners.sql): a running
council belongs to the process instance whose lease it names, and only councils of owners whose
lease ran out may be marked interrupted (CouncilRepository.mark_interrupted)."""

from __future__ import annotations

import time

from core.storage.database import Database


class OwnerRepository:
    def __init__(self, db: Database):
        self._db = db

    async def renew(self, owner_id: str, lease_s: float, *, host: str = "", pid: int = 0) -> None:
        """Register or renew a process instance's lease: its councils are its own until `lease_s` from now."""
        now = time.time()
        await self._db.execute(
            """INSERT INTO council_owners (owner_id, host, pid, started_at, renewed_at, lease_until)
               VALUES (:owner_id, :host, :pid, :now, :now, :lease_until)
               ON CONFLICT (owner_id) DO UPDATE SET renewed_at = excluded.renewed_at,
               lease_until = excluded.lease_until""",
            {"owner_id": owner_id, "host": host, "pid": pid, "now": now, "lease_until": now + lease_s},
        )

    async def drop(self, owner_id: str) -> None:
        """A clean shutdown: whatever the owner still runs is orphaned at once (the next reaper takes it)."""
        await self._db.execute("DELETE FROM council_owners WHERE owner_id = ?", (owner_id,))
