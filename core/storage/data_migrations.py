"""Migrations that SQL cannot express, each run in the transaction of its numbered file.

A step is named after its file (`migrations/NNNN_<name>.sql`, whose comment says what it does):
the migration runner (core/storage/migrations.py) runs the file's statements, then its step, then
records the version, all in one transaction. So a step runs once per database, a failed one leaves
nothing behind, and it is listed in `schema_version` like any migration.

A step reads the stored JSON as JSON, not through today's models: it must read what older
releases wrote, whatever the models have become since.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from core.storage.database import Transaction

BATCH = 200  # councils read at once: a large history is walked by keyset, never loaded whole


async def remove_stored_markers(tx: Transaction) -> None:
    """Internal markers out of the texts of councils stored before the stream filter was complete
    (markers joined across streamed pieces): in the `result` JSON (the search index follows it) and
    in the `answers`, `reviews` and `synthesis` rows. Without nonces (never stored): a bare one stays."""
    after = ""
    while rows := await tx.fetchall(
        "SELECT id, result FROM councils WHERE id > ? AND result IS NOT NULL ORDER BY id LIMIT ?", (after, BATCH)
    ):
        for council_id, stored in ((row[0], row[1]) for row in rows):
            after = council_id
            result = json.loads(stored)
            changed = _cleaned_texts(result)
            if not changed:
                continue
            await tx.execute("UPDATE councils SET result = ? WHERE id = ?", (_dumps(result), council_id))
            for table, old, new in changed:
                await tx.execute(
                    f"UPDATE {table} SET text = ? WHERE council_id = ? AND text = ?", (new, council_id, old)
                )


def _cleaned_texts(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Cleans `result`'s texts in place; (table, old text, new text) of each one that changed."""
    # Imported here: the marker forms are regular expressions built at import, and every command
    # that opens the database imports this module, while a database needs this step once.
    from core.shared.markers import has_markers, strip_markers

    written = [("answers", a) for a in result.get("answers") or []]
    written += [("reviews", r) for r in result.get("reviews") or []]
    if result.get("synthesis"):
        written.append(("synthesis", result["synthesis"]))
    changed = []
    for table, item in written:
        text = item.get("text")
        if text and has_markers(text):
            item["text"] = strip_markers(text)
            changed.append((table, text, item["text"]))
    return changed


def _dumps(result: dict[str, Any]) -> str:
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"))  # as pydantic's model_dump_json


# migrations/NNNN_<name>.sql -> its step.
STEPS: dict[str, Callable[[Transaction], Awaitable[None]]] = {
    "stored_markers_removed": remove_stored_markers,
}
