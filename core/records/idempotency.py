"""The API's `Idempotency-Key`: the same key from the same caller within 24 hours names the
council the first request started, so that a client's retry (the openai SDKs retry by default)
returns that council's answer instead of running and paying for another."""

from __future__ import annotations

import time

from core.models import KeyClaim, new_council_id
from core.storage import Storage

KEY_LIFETIME_S = 24 * 3600


class IdempotencyKeys:
    def __init__(self, storage: Storage):
        self.storage = storage

    async def claim(self, scope: str, key: str, fingerprint: str) -> KeyClaim:
        """The key's council: a new id to start (`fresh`), or the one an earlier request started."""
        now = time.time()
        return await self.storage.idempotency.claim(
            scope, key, fingerprint, new_council_id(), now=now, expired_before=now - KEY_LIFETIME_S
        )

    async def release(self, claim: KeyClaim, scope: str, key: str) -> None:
        """The claimed council was refused before it started: the key is free again."""
        await self.storage.idempotency.release(scope, key, claim.council_id)
