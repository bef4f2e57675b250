"""The browser app's sign-ins (migrations/0023_web_sessions.sql): one row per session, found by
the hash of the token its cookie holds; core/channels/sessions.py decides what they mean."""

from __future__ import annotations

from core.models.browse import WebSession
from core.storage.database import Database

_COLUMNS = "platform, workspace_id, user_id, user_name, admin, created_at, expires_at, admin_checked_at, revoked_at"


class WebSessionRepository:
    def __init__(self, db: Database):
        self._db = db

    async def create(self, token_hash: str, session: WebSession) -> None:
        await self._db.execute(
            f"INSERT INTO web_sessions (token_hash, {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                token_hash,
                session.platform,
                session.workspace_id,
                session.user_id,
                session.user_name,
                int(session.admin),
                session.created_at,
                session.expires_at,
                session.admin_checked_at,
                session.revoked_at,
            ),
        )

    async def get(self, token_hash: str) -> WebSession | None:
        rows = await self._db.fetchall(f"SELECT {_COLUMNS} FROM web_sessions WHERE token_hash = ?", (token_hash,))
        if not rows:
            return None
        row = rows[0]
        return WebSession(
            platform=row["platform"],
            workspace_id=row["workspace_id"],
            user_id=row["user_id"],
            user_name=row["user_name"],
            admin=bool(row["admin"]),
            created_at=float(row["created_at"]),
            expires_at=float(row["expires_at"]),
            admin_checked_at=float(row["admin_checked_at"]),
            revoked_at=None if row["revoked_at"] is None else float(row["revoked_at"]),
        )

    async def renew(self, token_hash: str, expires_at: float) -> None:
        await self._db.execute(
            "UPDATE web_sessions SET expires_at = ? WHERE token_hash = ? AND revoked_at IS NULL",
            (expires_at, token_hash),
        )

    async def checked(self, token_hash: str, admin: bool, at: float) -> None:
        await self._db.execute(
            "UPDATE web_sessions SET admin = ?, admin_checked_at = ? WHERE token_hash = ?",
            (int(admin), at, token_hash),
        )

    async def revoke(self, token_hash: str, at: float) -> None:
        await self._db.execute(
            "UPDATE web_sessions SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL", (at, token_hash)
        )

    async def revoke_user(self, user_id: str | None, at: float) -> int:
        """Every live session of `user_id` (None: of everyone) revoked; how many were."""
        where, params = ("AND user_id = ?", [user_id]) if user_id is not None else ("", [])
        return await self._db.execute(
            f"UPDATE web_sessions SET revoked_at = ? WHERE revoked_at IS NULL AND expires_at > ? {where}",
            [at, at, *params],
        )

    async def forget_expired(self, before: float) -> None:
        """Rows that can sign nobody in any more (expired or revoked before `before`) are dropped."""
        await self._db.execute(
            "DELETE FROM web_sessions WHERE expires_at < ? OR (revoked_at IS NOT NULL AND revoked_at < ?)",
            (before, before),
        )
