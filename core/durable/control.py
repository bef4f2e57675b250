"""Stop / Synthesize now for a durable council, wherever it runs.

The request is stored with the council's job (a worker that takes the council over later applies
it at once) and, on PostgreSQL, announced with NOTIFY on one channel that every worker process
LISTENs to; the process running the council applies it to its run.
"""

from __future__ import annotations

import asyncio
import logging

from core.durable.runs import CouncilRuns
from core.durable.worker import apply_control
from core.models import ControlAction
from core.storage import Storage
from core.storage.database import POSTGRESQL

log = logging.getLogger(__name__)

CHANNEL = "council_control"
_RECONNECT_S = 2.0


class ControlRelay:
    """Carries Stop / Synthesize now to whichever process runs a durable council (the engine's own
    per-run switch is core/engine/control.py's CouncilControl)."""

    def __init__(self, storage: Storage, runs: CouncilRuns, conninfo: str | None = None) -> None:
        self.storage = storage
        self.runs = runs
        self.conninfo = conninfo  # the PostgreSQL server to LISTEN on (None: SQLite, one process)

    async def send(self, council_id: str, action: ControlAction) -> bool:
        """False when no durable council by that id is running."""
        if not await self.storage.jobs.save_control(council_id, action):
            return False
        if self.storage.backend == POSTGRESQL:
            await self.storage.db.execute("SELECT pg_notify(?, ?)", (CHANNEL, f"{council_id}:{action.value}"))
        return True

    async def listen(self) -> None:
        """Apply every announced request to the runs of this process, until cancelled."""
        if self.conninfo is None:
            return
        import psycopg

        while True:
            try:
                async with await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    async for notice in conn.notifies():
                        self.apply(notice.payload)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the server restarted, say: listen again
                log.warning("council control channel lost (%s); listening again", type(exc).__name__)
                await asyncio.sleep(_RECONNECT_S)

    def apply(self, payload: str) -> None:
        council_id, _, action = payload.partition(":")
        run = self.runs.get(council_id)
        if run is None or run.done:
            return  # another process runs it
        try:
            apply_control(run, ControlAction(action))
        except ValueError:
            log.warning("ignoring an unknown council control %r", action)
