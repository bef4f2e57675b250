"""Readers' feedback on councils: a good/bad vote per user per council (changeable) and an
optional comment. `FeedbackStore` holds the SQL (table `council_feedback`, migration 0005);
`CouncilFeedback` holds the rules (who may vote: whoever can see the council) and is what
adapters and the CLI call, as `service.feedback`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import TYPE_CHECKING, Any

from core.errors import InputRejected, NotFound
from core.models import CouncilResult, ModelApproval, Origin
from core.models.feedback import COMMENT_MAX_CHARS, FeedbackEntry, FeedbackVote, Vote
from core.models.text import clean_text
from core.shared.redact import Redactor

if TYPE_CHECKING:
    from core.storage import Storage

RECENT_LIMIT = 200


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def _scope(prefix: str, platform=None, workspace_id=None, channel_id=None) -> tuple[str, list[Any]]:
    clauses, params = [], []
    for column, value in (("platform", platform), ("workspace_id", workspace_id), ("channel_id", channel_id)):
        if value is not None:
            clauses.append(f"{prefix}{column} = ?")
            params.append(value.value if isinstance(value, Enum) else value)
    return (" AND ".join(clauses) or "1=1"), params


_GOOD = "SUM(CASE WHEN f.vote = 'good' THEN 1 ELSE 0 END)"
_BAD = "SUM(CASE WHEN f.vote = 'bad' THEN 1 ELSE 0 END)"


class FeedbackStore:
    """The SQL of `council_feedback`, on the storage's connection (its lock and transactions)."""

    def __init__(self, storage: Storage):
        self.db = storage.db

    async def put_vote(self, council_id: str, user_id: str, user_name: str | None, vote: Vote) -> None:
        now = _iso(datetime.now(UTC))
        await self.db.execute(
            """INSERT INTO council_feedback (council_id, user_id, user_name, vote, created_at, updated_at)
               VALUES (?, ?, ?, ?, ?, ?)
               ON CONFLICT (council_id, user_id) DO UPDATE SET vote = excluded.vote,
               user_name = COALESCE(excluded.user_name, council_feedback.user_name),
               updated_at = excluded.updated_at""",
            (council_id, user_id, user_name, vote.value, now, now),
        )

    async def put_comment(self, council_id: str, user_id: str, comment: str | None) -> bool:
        changed = await self.db.execute(
            "UPDATE council_feedback SET comment = ?, updated_at = ? WHERE council_id = ? AND user_id = ?",
            (comment, _iso(datetime.now(UTC)), council_id, user_id),
        )
        return changed > 0

    async def votes(self, council_id: str) -> list[FeedbackVote]:
        rows = await self.db.fetchall(
            """SELECT council_id, user_id, user_name, vote, comment, created_at, updated_at
               FROM council_feedback WHERE council_id = ? ORDER BY created_at, user_id""",
            (council_id,),
        )
        return [_vote(r) for r in rows]

    async def tallies(self, council_ids: Iterable[str]) -> dict[str, tuple[int, int]]:
        ids = list(dict.fromkeys(council_ids))
        if not ids:
            return {}
        marks = ", ".join("?" for _ in ids)
        rows = await self.db.fetchall(
            f"SELECT f.council_id, {_GOOD}, {_BAD} FROM council_feedback f "
            f"WHERE f.council_id IN ({marks}) GROUP BY f.council_id",
            ids,
        )
        return {r[0]: (int(r[1] or 0), int(r[2] or 0)) for r in rows}

    async def recent(self, since: datetime, limit: int, **scope: Any) -> list[FeedbackEntry]:
        where, params = _scope("c.", **scope)
        rows = await self.db.fetchall(
            f"""SELECT f.council_id, f.user_id, f.user_name, f.vote, f.comment, f.created_at, f.updated_at,
                       c.question, c.platform, c.workspace_id, c.channel_id, c.chairman
                FROM council_feedback f JOIN councils c ON c.id = f.council_id
                WHERE f.updated_at >= ? AND {where} ORDER BY f.updated_at DESC LIMIT ?""",
            (_iso(since), *params, limit),
        )
        return [
            FeedbackEntry(
                **_vote(r).model_dump(),
                question=r[7],
                platform=r[8],
                workspace_id=r[9],
                channel_id=r[10],
                chairman=r[11],
            )
            for r in rows
        ]

    async def approval(self, **scope: Any) -> list[ModelApproval]:
        """Per model: votes on the answers it wrote as chairman, and on the councils it won."""
        where, params = _scope("c.", **scope)
        found: dict[str, ModelApproval] = {}
        for r in await self.db.fetchall(
            f"""SELECT s.model, {_GOOD}, {_BAD} FROM council_feedback f
                JOIN councils c ON c.id = f.council_id JOIN synthesis s ON s.council_id = f.council_id
                WHERE s.by_chairman = 1 AND {where} GROUP BY s.model""",
            params,
        ):
            entry = found.setdefault(r[0], ModelApproval(model=r[0]))
            entry.chairman_good, entry.chairman_bad = int(r[1] or 0), int(r[2] or 0)
        for r in await self.db.fetchall(
            f"""SELECT c.winner, {_GOOD}, {_BAD} FROM council_feedback f JOIN councils c ON c.id = f.council_id
                WHERE c.winner IS NOT NULL AND {where} GROUP BY c.winner""",
            params,
        ):
            entry = found.setdefault(r[0], ModelApproval(model=r[0]))
            entry.winner_good, entry.winner_bad = int(r[1] or 0), int(r[2] or 0)
        return sorted(found.values(), key=lambda a: a.model)


def _vote(row: Any) -> FeedbackVote:
    return FeedbackVote(
        council_id=row[0],
        user_id=row[1],
        user_name=row[2],
        vote=Vote(row[3]),
        comment=row[4],
        created_at=datetime.fromisoformat(row[5]),
        updated_at=datetime.fromisoformat(row[6]),
    )


Visibility = Callable[..., bool]  # (result, viewer, admin=) -> may the viewer see it


class CouncilFeedback:
    """Votes and comments, each checked here: only someone who can see a finished council may
    vote on it (a council they cannot see is "not found", as in exports)."""

    def __init__(
        self, storage: Storage, redact: Redactor, visible_to: Visibility, get_result: Callable[[str], Any]
    ) -> None:
        self.store = FeedbackStore(storage)
        self.redact = redact
        self._visible_to = visible_to
        self._get_result = get_result

    async def _visible(self, council_id: str, viewer: Origin, admin: bool) -> CouncilResult:
        council_id = (council_id or "").strip()
        try:
            result: CouncilResult = await self._get_result(council_id)
        except NotFound:
            raise NotFound("This council is not finished or no longer stored, so it cannot take feedback.") from None
        if not viewer.user_id or not self._visible_to(result, viewer, admin=admin):
            raise NotFound(f"No council with id `{council_id}` here.")
        return result

    async def vote(self, council_id: str, viewer: Origin, vote: Vote | str, *, admin: bool = False) -> FeedbackVote:
        """Record (or change) the viewer's vote; returns it as stored."""
        try:
            chosen = Vote(vote)
        except ValueError:
            raise InputRejected("A vote is either good or bad.") from None
        result = await self._visible(council_id, viewer, admin)
        assert viewer.user_id is not None
        user_name = clean_text(viewer.user_name) if viewer.user_name else None
        await self.store.put_vote(result.council_id, viewer.user_id, user_name, chosen)
        return await self._stored(result.council_id, viewer.user_id)

    async def comment(self, council_id: str, viewer: Origin, text: str, *, admin: bool = False) -> FeedbackVote:
        """Attach a comment to the viewer's vote (cleaned, secrets redacted, at most 2000 characters)."""
        result = await self._visible(council_id, viewer, admin)
        assert viewer.user_id is not None
        comment = self.redact(clean_text(text or "")).strip()[:COMMENT_MAX_CHARS] or None
        if not await self.store.put_comment(result.council_id, viewer.user_id, comment):
            raise InputRejected("Vote on the answer first (👍 or 👎), then add a comment.")
        return await self._stored(result.council_id, viewer.user_id)

    async def _stored(self, council_id: str, user_id: str) -> FeedbackVote:
        return next(v for v in await self.store.votes(council_id) if v.user_id == user_id)

    async def votes(self, council_id: str) -> list[FeedbackVote]:
        """Every vote on a council (history, exports, `council show`: callers that may see it)."""
        return await self.store.votes(council_id.strip())

    async def tallies(self, council_ids: Iterable[str]) -> dict[str, tuple[int, int]]:
        """(good, bad) per council id that has votes."""
        return await self.store.tallies(council_ids)

    async def recent(self, days: int = 7, *, limit: int = RECENT_LIMIT, **scope: Any) -> list[FeedbackEntry]:
        """Votes and comments of the last `days` days, newest first (`council feedback`)."""
        if days < 1:
            raise InputRejected("--days must be at least 1.")
        since = datetime.now(UTC) - timedelta(days=days)
        return await self.store.recent(since, max(1, min(limit, 1000)), **scope)

    async def approval(self, **scope: Any) -> list[ModelApproval]:
        return await self.store.approval(**scope)
