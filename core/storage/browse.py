"""The browser's history: finished councils a viewer may see, newest first, a page at a time.

Keyset pagination (`(created_at, id) < cursor`, on the `councils_recent` index) keeps every page
as fast as the first over any number of councils, where OFFSET would read every skipped row.
Words are searched with the database's own full-text index (migrations/0018_council_search.sql):
SQLite's FTS5 (newest first by the index's own numbers, the order councils were asked in; its
pages' cursor is that number), PostgreSQL's tsvector.
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
_ROW = "row"  # a search page's cursor: the search index number it stopped at
# Model calls a council made: its answers, refine mode's revisions, its reviews and its synthesis, as stored.
# An `auto` answer that stood as written (the result's synthesis.agreed) made no call of its own.
_AGREED = {
    "sqlite": "COALESCE(json_extract(councils.result, '$.synthesis.agreed'), 0) = 1",
    POSTGRESQL: "COALESCE((councils.result::jsonb #>> '{synthesis,agreed}')::boolean, false)",
}
_CALLS = """(SELECT COUNT(*) FROM answers a WHERE a.council_id = councils.id)
          + (SELECT COUNT(*) FROM revisions v WHERE v.council_id = councils.id)
          + (SELECT COUNT(*) FROM reviews r WHERE r.council_id = councils.id)
          + (SELECT COUNT(*) FROM synthesis s WHERE s.council_id = councils.id AND NOT ({agreed})) AS calls,
          (SELECT substr(s.text, 1, 2000) FROM synthesis s WHERE s.council_id = councils.id) AS preview"""


class BrowseRepository:
    def __init__(self, db: Database):
        self._db = db
        self._calls = _CALLS.format(agreed=_AGREED.get(db.dialect, _AGREED["sqlite"]))

    async def page(self, visibility: Visibility, query: HistoryQuery) -> tuple[list[HistoryItem], str | None]:
        """One page of finished councils and the cursor of the next (None: no more)."""
        clauses, params = self._where(visibility, query)
        words = search_words(query.q)
        if words and self._db.dialect != POSTGRESQL:
            return await self._search(words, query, clauses, params)
        if query.after:
            created, council_id = decode_cursor(query.after)
            clauses.append("(created_at < ? OR (created_at = ? AND id < ?))")
            params += [created, created, council_id]
        rows = await self._db.fetchall(
            f"""SELECT {SUMMARY_COLUMNS}, {self._calls} FROM councils WHERE {" AND ".join(clauses)}
                ORDER BY created_at DESC, id DESC LIMIT ?""",
            [*params, query.limit + 1],
        )
        last = rows[query.limit - 1] if len(rows) > query.limit else None
        return await self._items(rows[: query.limit]), encode_cursor(last["created_at"], last["id"]) if last else None

    def _where(self, visibility: Visibility, query: HistoryQuery) -> tuple[list[str], list[Any]]:
        """The clauses of `page` but the cursor's (on PostgreSQL, its words' too)."""
        clauses, params = ["status != ?"], [RUNNING]
        _visible(visibility, clauses, params)
        _filters(query, clauses, params)
        words = search_words(query.q)
        if words and self._db.dialect == POSTGRESQL:
            clauses.append(
                "id IN (SELECT council_id FROM council_search WHERE document @@ plainto_tsquery('english', ?))"
            )
            params.append(" ".join(words))
        return clauses, params

    async def matches(self, visibility: Visibility, query: HistoryQuery) -> int:
        """How many finished councils `visibility` may see match the search (all its pages)."""
        clauses, params = self._where(visibility, query)
        words = search_words(query.q)
        if words and self._db.dialect != POSTGRESQL:
            hits = """SELECT r.council_id AS hit_id FROM council_search s
                      JOIN council_search_rows r ON r.row = s.rowid WHERE council_search MATCH ?"""
            rows = await self._db.fetchall(
                f"""SELECT COUNT(*) AS n FROM councils JOIN ({hits}) hits ON councils.id = hits.hit_id
                    WHERE {" AND ".join(clauses)}""",
                [_fts_query(words), *params],
            )
        else:
            rows = await self._db.fetchall(f"SELECT COUNT(*) AS n FROM councils WHERE {' AND '.join(clauses)}", params)
        return int(rows[0]["n"])

    async def ids_starting_with(self, visibility: Visibility, prefix: str, limit: int = 2) -> list[str]:
        """Up to `limit` ids of finished councils `visibility` may see that start with `prefix` (hex
        digits, so no LIKE wildcard): a start of an id is resolved among these alone, so another
        workspace's councils can neither be found by it nor make it ambiguous."""
        clauses, params = ["id LIKE ?", "result IS NOT NULL"], [prefix + "%"]
        _visible(visibility, clauses, params)
        rows = await self._db.fetchall(
            f"SELECT id FROM councils WHERE {' AND '.join(clauses)} ORDER BY id LIMIT ?", [*params, limit]
        )
        return [row["id"] for row in rows]

    async def _search(
        self, words: list[str], query: HistoryQuery, clauses: list[str], params: list[Any]
    ) -> tuple[list[HistoryItem], str | None]:
        """SQLite: the newest matches straight from the FTS5 index, walking its numbers (the order
        councils were asked in) backwards, so that a word every council holds costs no more than a
        rare one. Every word, each quoted: FTS5's own syntax (NEAR, column:, *) is not the reader's."""
        hits = """SELECT r.council_id AS hit_id, s.rowid AS hit_row FROM council_search s
                  JOIN council_search_rows r ON r.row = s.rowid WHERE council_search MATCH ?"""
        search_params: list[Any] = [_fts_query(words)]
        if query.after:
            hits += " AND s.rowid < ?"
            search_params.append(decode_row_cursor(query.after))
        rows = await self._db.fetchall(
            f"""SELECT {SUMMARY_COLUMNS}, {self._calls}, hit_row
                FROM councils JOIN ({hits}) hits ON councils.id = hits.hit_id
                WHERE {" AND ".join(clauses)} ORDER BY hit_row DESC LIMIT ?""",
            [*search_params, *params, query.limit + 1],
        )
        last = rows[query.limit - 1] if len(rows) > query.limit else None
        return await self._items(rows[: query.limit]), encode_cursor(_ROW, str(last["hit_row"])) if last else None

    async def _items(self, rows: list[Any]) -> list[HistoryItem]:
        items = [
            HistoryItem(**summary_from_row(r).model_dump(), calls=int(r["calls"]), preview=r["preview"]) for r in rows
        ]
        await with_material(self._db, items)  # type: ignore[arg-type]
        return items


def search_words(q: str | None) -> list[str]:
    """The words a search looks for (its own syntax is not the reader's: words only)."""
    return _WORD.findall(q or "")[:_MAX_WORDS]


def _fts_query(words: list[str]) -> str:
    return " ".join(f'"{word}"' for word in words)


def _filters(query: HistoryQuery, clauses: list[str], params: list[Any]) -> None:
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


def decode_row_cursor(cursor: str) -> int:
    """The search index number a search page's cursor names (past the end: from the top)."""
    kind, number = decode_cursor(cursor)
    return int(number) if kind == _ROW and number.isdigit() else 2**62


def decode_cursor(cursor: str) -> tuple[str, str]:
    """The (created_at, id) a cursor names; a cursor that is not one of ours starts from the top."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return "9999", ""
    created, _, council_id = text.partition("|")
    return (created, council_id) if council_id else ("9999", "")
