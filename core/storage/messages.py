"""The messages we post for a council (migrations/0011_council_messages.sql): which council a
chat message belongs to and what it is there, so that a thread's history is read from here and
not from what the message shows."""

from __future__ import annotations

from collections.abc import Sequence

from core.models import MessageRef, MessageRole
from core.storage.database import Database


class MessageRepository:
    def __init__(self, db: Database):
        self._db = db

    async def record(self, platform: str, channel_id: str, message_id: str, council_id: str, role: MessageRole) -> None:
        """Map one message to its council; recording it again replaces its council and role (a
        live display that ends up holding the answer becomes the answer)."""
        await self._db.execute(
            """INSERT INTO council_messages (platform, channel_id, message_id, council_id, role)
               VALUES (?, ?, ?, ?, ?)
               ON CONFLICT (platform, channel_id, message_id)
               DO UPDATE SET council_id = excluded.council_id, role = excluded.role""",
            (platform, channel_id, message_id, council_id, role),
        )

    async def lookup(self, platform: str, channel_id: str, message_ids: Sequence[str]) -> dict[str, MessageRef]:
        """The mapped ones among `message_ids` (one query), by message id; unmapped ones are absent."""
        ids = list(dict.fromkeys(message_ids))
        if not ids:
            return {}
        rows = await self._db.fetchall(
            f"""SELECT message_id, council_id, role FROM council_messages
                WHERE platform = ? AND channel_id = ? AND message_id IN ({", ".join("?" * len(ids))})""",
            (platform, channel_id, *ids),
        )
        return {row["message_id"]: MessageRef(council_id=row["council_id"], role=row["role"]) for row in rows}

    async def of_council(self, platform: str, council_id: str, role: MessageRole) -> list[tuple[str, str]]:
        """(channel id, message id) of a council's messages in `role`, in the order they were posted."""
        rows = await self._db.fetchall(
            """SELECT channel_id, message_id FROM council_messages
               WHERE platform = ? AND council_id = ? AND role = ? ORDER BY message_id""",
            (platform, council_id, role),
        )
        return [(row["channel_id"], row["message_id"]) for row in rows]

    async def forget_pruned(self) -> int:
        """The messages of councils that are no longer stored (pruned); returns how many."""
        return await self._db.execute("DELETE FROM council_messages WHERE council_id NOT IN (SELECT id FROM councils)")
