"""Which council each chat message we post belongs to (core/storage/messages.py), for the
adapters: they record what they post and read a thread's history back through it (bot/history.py)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from core.models import MessageRef, MessageRole, Platform, RecordPost
from core.storage import Storage

log = logging.getLogger(__name__)


class CouncilMessages:
    def __init__(self, storage: Storage):
        self.storage = storage

    async def record(
        self, platform: Platform | str, channel_id: str, message_id: str, council_id: str, role: MessageRole
    ) -> None:
        """Map a message we posted to its council (again: its new role). Never raises: a post
        must not fail because its row could not be written (the thread's history then lacks it)."""
        try:
            await self.storage.messages.record(Platform(platform).value, channel_id, message_id, council_id, role)
        except Exception as exc:
            log.warning("could not map message %s in %s to council %s: %s", message_id, channel_id, council_id, exc)

    async def lookup(
        self, platform: Platform | str, channel_id: str, message_ids: Sequence[str]
    ) -> dict[str, MessageRef]:
        """The mapped ones among `message_ids` of one channel, by message id (one query)."""
        return await self.storage.messages.lookup(Platform(platform).value, channel_id, message_ids)

    async def progress_of(self, platform: Platform | str, council_id: str) -> list[tuple[str, str]]:
        """(channel id, message id) of the progress messages posted for a council, by every
        process that ran it (a resumed council's earlier live display among them). Never raises."""
        try:
            return await self.storage.messages.of_council(Platform(platform).value, council_id, "progress")
        except Exception as exc:
            log.warning("could not read the messages of council %s: %s", council_id, exc)
            return []

    def for_council(self, platform: Platform | str, council_id: str) -> RecordPost:
        """`record` with one council's platform and id bound: what its follower calls for each post."""

        async def record(channel_id: str, message_id: str, role: MessageRole) -> None:
            await self.record(platform, channel_id, message_id, council_id, role)

        return record
