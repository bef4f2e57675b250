"""The global concurrency cap across processes: MAX_CONCURRENT_COUNCILS running councils in all
the processes on one PostgreSQL database together, not in each.

Each process still queues its own councils (ConcurrencyGate: FIFO, MAX_QUEUED_COUNCILS); a
council that holds its process's slot then takes one of the database's slots
(core/storage/slots.py) before it starts, polling while every slot is busy elsewhere. A slot
belongs to the process's lease (core/ownership.py), so one killed mid-council frees its slots
within one lease. Giving a slot back is scheduled from synchronous code (Ticket.release); the
next take in this process waits for it, so a slot handed over locally is never counted twice.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.ownership import CouncilOwner
    from core.storage import Storage

log = logging.getLogger(__name__)

POLL_S = 1.0  # how often a council waiting for a slot held elsewhere asks again


class SharedCap:
    def __init__(self, storage: Storage, owner: CouncilOwner, limit: int, poll_s: float = POLL_S):
        self.storage = storage
        self.owner = owner
        self.limit = limit
        self.poll_s = poll_s
        self._giving_back: set[asyncio.Task[None]] = set()

    async def take(self, slot_id: str) -> bool:
        """One try for a slot: True when it is ours."""
        if self._giving_back:
            await asyncio.gather(*self._giving_back, return_exceptions=True)
        await self.owner.start()  # a slot counts only under a live lease
        return await self.storage.slots.take(slot_id, self.owner.owner_id, self.limit)

    def give_back(self, slot_id: str) -> None:
        task = asyncio.get_running_loop().create_task(self._give_back(slot_id), name=f"slot-{slot_id}")
        self._giving_back.add(task)
        task.add_done_callback(self._giving_back.discard)

    async def _give_back(self, slot_id: str) -> None:
        try:
            await self.storage.slots.give_back(slot_id)
        except Exception as exc:  # the lease frees it: a slot of a stopped owner does not count
            log.warning("could not give a council slot back (freed when this process's lease ends): %s", exc)

    async def aclose(self) -> None:
        """Wait for the slots being given back (before the database closes)."""
        if self._giving_back:
            await asyncio.gather(*self._giving_back, return_exceptions=True)
