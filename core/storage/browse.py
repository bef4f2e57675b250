"""The browser's history: finished councils a viewer may see, newest first, a page at a time.

Keyset pagination (`(created_at, id) < cursor`, on the `councils_recent` index) keeps every page
as fast as the first over any number of councils, where OFFSET would read every skipped row.
Words are searched with the database's own full-text index (migrations/0017_council_search.sql):
SQLite's FTS5, PostgreSQL's tsvector.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from core.models.browse import HistoryItem, HistoryQuery, Visibility
from core.storage.attachments_sources import with_material
from core.storage.councils import RUNNING, SUMMARY_COLUMNS, summary_from_row
from core.storage.database import POSTGRESQL, Database

_WORD = re.compile(r"\w+", re.UNICODE)
_MAX_WORDS = 12
# Model calls a council made: its answers, its reviews and its synthesis, as stored.
_CALLS = """(SELECT COUNT(*) FROM answers a WHERE a.council_id = councils.id)
          + (SELECT COUNT(*) FROM reviews r WHERE r.council_id = councils.id)
          + (SELECT COUNT(*) FROM synthesis s WHERE s.council_id = councils.id) AS calls"""


class BrowseRepository:
    def __init__(self, db: Database):
        self._db = db

    async def page(self, visibility: Visibility, query: HistoryQuery) -> tuple[list[HistoryItem], str | None]:
        """One page of finished councils and the cursor of the next (None: no more)."""
        clauses, params = ["status != ?"], [RUNNING]
        _visible(visibility, clauses, params)
        self._filters(query, clauses, params)
        if query.after:
            created, council_id = decode_cursor(query.after)
            clauses.append("(created_at < ? OR (created_at = ? AND id < ?))")
            params += [created, created, council_id]
        rows = await self._db.fetchall(
            f"""SELECT {SUMMARY_COLUMNS}, {_CALLS} FROM councils WHERE {" AND ".join(clauses)}
                ORDER BY created_at DESC, id DESC LIMIT ?""",
            [*params, query.limit + 1],
        )
        items = [HistoryItem(**summary_from_row(r).model_dump(), calls=int(r["calls"])) for r in rows[: query.limit]]
        await with_material(self._db, items)  # type: ignore[arg-type]
        more = len(rows) > query.limit
        return items, encode_cursor(rows[query.limit - 1]["created_at"], rows[query.limit - 1]["id"]) if more else None

    def _filters(self, query: HistoryQuery, clauses: list[str], params: list[Any]) -> None:
        if query.status is not None:
            clauses.append("status = ?")
            params.append(query.status.value)
        if query.platform is not None:
            clauses.append("platform = ?")
            params.append(query.platform.value)
        if query.channel:
            clauses.append("channel_id = ?")
            params.append(query.channel)
        if query.model:
            clauses.append("EXISTS (SELECT 1 FROM answers a WHERE a.council_id = councils.id AND a.model = ?)")
            params.append(query.model)
        words = _WORD.findall(query.q or "")[:_MAX_WORDS]
        if not words:
            return
        if self._db.dialect == POSTGRESQL:
            clauses.append(
                "id IN (SELECT council_id FROM council_search WHERE document @@ plainto_tsquery('english', ?))"
            )
            params.append(" ".join(words))
        else:  # every word, each quoted: FTS5's own syntax (NEAR, column:, *) is not the reader's
            clauses.append(
                """id IN (SELECT r.council_id FROM council_search s JOIN council_search_rows r ON r.row = s.rowid
                          WHERE council_search MATCH ?)"""
            )
            params.append(" ".join(f'"{word}"' for word in words))


def _visible(visibility: Visibility, clauses: list[str], params: list[Any]) -> None:
    """Permissions.visibility's rule as SQL (the rule itself lives there)."""
    if visibility.platform is not None:
        clauses.append("platform = ?")
        params.append(visibility.platform)
        clauses.append("workspace_id IS NULL" if visibility.workspace_id is None else "workspace_id = ?")
        if visibility.workspace_id is not None:
            params.append(visibility.workspace_id)
    if not visibility.whole_workspace:
        own = ["user_id = ?"]
        params.append(visibility.user_id or "")
        if visibility.channel_id is not None:
            own.append("channel_id = ?")
            params.append(visibility.channel_id)
        clauses.append(f"({' OR '.join(own)})")


def encode_cursor(created_at: str, council_id: str) -> str:
    return base64.urlsafe_b64encode(f"{created_at}|{council_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, str]:
    """The (created_at, id) a cursor names; a cursor that is not one of ours starts from the top."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return "9999", ""
    created, _, council_id = text.partition("|")
    return (created, council_id) if council_id else ("9999", "")
