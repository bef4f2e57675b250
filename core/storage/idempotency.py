"""Idempotency keys of the API (migrations/0014_api_idempotency.sql): which council a caller's
key started, so that a retried request finds it instead of starting another."""

from __future__ import annotations

from core.models import KeyClaim
from core.storage.database import Database


class IdempotencyRepository:
    def __init__(self, db: Database):
        self._db = db

    async def claim(
        self, scope: str, key: str, fingerprint: str, council_id: str, *, now: float, expired_before: float
    ) -> KeyClaim:
        """Claim `key` for `council_id`, unless a claim made since `expired_before` holds it (then
        that one is returned). Atomic: of two concurrent claims, one wins."""
        await self._db.execute("DELETE FROM api_idempotency WHERE created_at < ?", (expired_before,))
        await self._db.execute(
            """INSERT INTO api_idempotency (scope, idem_key, fingerprint, council_id, created_at)
               VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, idem_key) DO NOTHING""",
            (scope, key, fingerprint, council_id, now),
        )
        rows = await self._db.fetchall(
            "SELECT council_id, fingerprint FROM api_idempotency WHERE scope = ? AND idem_key = ?", (scope, key)
        )
        row = rows[0]
        return KeyClaim(
            council_id=row["council_id"], fingerprint=row["fingerprint"], fresh=row["council_id"] == council_id
        )

    async def release(self, scope: str, key: str, council_id: str) -> None:
        """Give the key up (its council was refused before it started): a retry may use it."""
        await self._db.execute(
            "DELETE FROM api_idempotency WHERE scope = ? AND idem_key = ? AND council_id = ?", (scope, key, council_id)
        )
