"""Which process instance runs which council: a lease per process, renewed while it lives.

A council is written with the id of the process instance that runs it (its owner). The owner
renews its lease every third of `lease_s`; a council whose owner stopped renewing (killed,
crashed, its machine gone) is marked interrupted by the next live owner, within about one lease.
Processes that only read (`council history`, `export`, `leaderboard`, `usage`, `doctor`) never
become owners and so never mark anything. Several bot processes on one database each own their
councils; this is the single-process half of running replicas (a job queue's own worker leases
decide when a queued council's worker is gone; see core/durable).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.storage import Storage

log = logging.getLogger(__name__)

LEASE_S = 30.0  # a dead owner's councils are marked interrupted within about this long


class CouncilOwner:
    def __init__(self, storage: Storage, lease_s: float = LEASE_S):
        self.storage = storage
        self.lease_s = lease_s
        self.owner_id = uuid.uuid4().hex
        self._renewer: asyncio.Task[None] | None = None
        self._starting = asyncio.Lock()
        # Run after each renewal: the in-process queue adopts dead owners' durable councils here.
        self.after_renew: list[Callable[[], Awaitable[None]]] = []

    @property
    def active(self) -> bool:
        return self._renewer is not None and not self._renewer.done()

    async def start(self) -> None:
        """Take the lease (idempotent), mark the councils of dead owners, and keep renewing."""
        async with self._starting:
            if self.active:
                return
            await self._renew()
            await self.reap()
            self._renewer = asyncio.create_task(self._renew_forever(), name=f"council-owner-{self.owner_id}")

    async def _renew(self) -> None:
        await self.storage.owners.renew(self.owner_id, self.lease_s, host=socket.gethostname(), pid=os.getpid())

    async def reap(self) -> int:
        marked = await self.storage.councils.mark_interrupted()
        if marked:
            log.warning("marked %d council(s) as interrupted: the process running them stopped renewing", marked)
        for hook in self.after_renew:
            await hook()
        return marked

    async def _renew_forever(self) -> None:
        while True:
            await asyncio.sleep(self.lease_s / 3)
            try:
                await self._renew()
                await self.reap()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a busy database must not end the lease for good: try again next beat
                log.warning("could not renew the council lease: %s", exc)

    async def stop(self) -> None:
        """A clean shutdown gives the lease up, so another process may take over at once."""
        task, self._renewer = self._renewer, None
        if task is None:
            return
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        try:
            await self.storage.owners.drop(self.owner_id)
        except Exception as exc:
            log.warning("could not give up the council lease: %s", exc)
