"""Slack installations and OAuth states on the council database, platform-free: installations
are plain dicts (slack_sdk's own form, which bot/slack/installations.py turns into its store
interface for bolt's OAuth flow) kept whole as Fernet ciphertext in `data`; the plain columns are
only the ids a lookup needs ('' where absent). One bot row per workspace or organisation (the
latest: a reinstall or a token rotation replaces it) and one installation row per installing user.
Replicas on one PostgreSQL database share all of it.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any, NamedTuple

from core.shared.redact import Redactor
from core.storage.database import Database, Transaction
from core.tenants.secrets import SecretBox

STATE_LIFETIME_S = 600.0  # Slack's flow gives the installer ten minutes, as bolt's own stores do
_TOKENS = ("bot_token", "bot_refresh_token", "user_token", "user_refresh_token")

Data = dict[str, Any]


def _learn_tokens(data: Data) -> Data:
    """Every token read or written becomes one the redaction filter masks (logs, errors, stored text)."""
    for name in _TOKENS:
        if data.get(name):
            Redactor.learn(str(data[name]))
    return data


class InstalledCount(NamedTuple):
    workspaces: int
    organisations: int  # org-wide (Enterprise Grid) installs


class InstallationRecords:
    def __init__(self, db: Database, box: SecretBox):
        self._db = db
        self._box = box

    @staticmethod
    async def installed(db: Database) -> InstalledCount:
        """How many workspaces and organisations have a bot installed (counted, nothing decrypted)."""
        rows = await db.fetchall(
            "SELECT COALESCE(SUM(CASE WHEN team_key = '' THEN 0 ELSE 1 END), 0), "
            "COALESCE(SUM(CASE WHEN team_key = '' THEN 1 ELSE 0 END), 0) FROM slack_bots"
        )
        return InstalledCount(int(rows[0][0]), int(rows[0][1]))

    # ----------------------------------------------------------------- writes

    async def save(
        self, enterprise: str, team: str, user: str, installed_at: float, data: Data, bot: Data | None
    ) -> None:
        """An installation, and its bot as the workspace's current one, in one transaction."""
        _learn_tokens(data)
        async with self._db.transaction() as tx:
            await tx.execute(
                """INSERT INTO slack_installations (enterprise_key, team_key, user_key, installed_at, data)
                   VALUES (?, ?, ?, ?, ?) ON CONFLICT (enterprise_key, team_key, user_key)
                   DO UPDATE SET installed_at = excluded.installed_at, data = excluded.data""",
                (enterprise, team, user, installed_at, self._seal(data)),
            )
            if bot is not None:
                await self._save_bot(tx, enterprise, team, installed_at, bot)

    async def save_bot(self, enterprise: str, team: str, installed_at: float, bot: Data) -> None:
        async with self._db.transaction() as tx:
            await self._save_bot(tx, enterprise, team, installed_at, bot)

    async def _save_bot(self, tx: Transaction, enterprise: str, team: str, installed_at: float, bot: Data) -> None:
        _learn_tokens(bot)
        await tx.execute(
            """INSERT INTO slack_bots (enterprise_key, team_key, installed_at, data) VALUES (?, ?, ?, ?)
               ON CONFLICT (enterprise_key, team_key) DO UPDATE SET installed_at = excluded.installed_at,
               data = excluded.data""",
            (enterprise, team, installed_at, self._seal(bot)),
        )

    # ----------------------------------------------------------------- reads

    async def find_bot(self, enterprise: str, team: str) -> Data | None:
        return await self._one(
            "SELECT data FROM slack_bots WHERE enterprise_key = ? AND team_key = ?", (enterprise, team)
        )

    async def find_team_bot(self, team: str) -> Data | None:
        """A workspace's bot whatever organisation it is in (a worker knows only the team of a council)."""
        return await self._one(
            "SELECT data FROM slack_bots WHERE team_key = ? ORDER BY installed_at DESC LIMIT 1", (team,)
        )

    async def find_installation(self, enterprise: str, team: str, user: str | None) -> Data | None:
        """The user's installation, or the workspace's latest when `user` is None."""
        sql = "SELECT data FROM slack_installations WHERE enterprise_key = ? AND team_key = ?"
        params: list[Any] = [enterprise, team]
        if user is not None:
            sql += " AND user_key = ?"
            params.append(user)
        return await self._one(sql + " ORDER BY installed_at DESC LIMIT 1", params)

    async def _one(self, sql: str, params: Any) -> Data | None:
        rows = await self._db.fetchall(sql, params)
        return _learn_tokens(json.loads(self._box.decrypt(rows[0][0]))) if rows else None

    # ----------------------------------------------------------------- deletes (uninstall, tokens_revoked)

    async def delete_bot(self, enterprise: str, team: str) -> None:
        await self._db.execute("DELETE FROM slack_bots WHERE enterprise_key = ? AND team_key = ?", (enterprise, team))

    async def delete_installation(self, enterprise: str, team: str, user: str | None) -> None:
        sql = "DELETE FROM slack_installations WHERE enterprise_key = ? AND team_key = ?"
        params: list[Any] = [enterprise, team]
        if user is not None:
            sql += " AND user_key = ?"
            params.append(user)
        await self._db.execute(sql, params)

    def _seal(self, data: Data) -> str:
        return self._box.encrypt(json.dumps(data, default=str))


class OAuthStates:
    """The OAuth flow's `state` values: issued with the install link, consumed once by the redirect,
    on the database so that a redirect may reach another replica than the install page did."""

    def __init__(self, db: Database, lifetime_s: float = STATE_LIFETIME_S):
        self._db = db
        self._lifetime_s = lifetime_s

    async def issue(self) -> str:
        state = secrets.token_urlsafe(32)
        now = time.time()
        async with self._db.transaction() as tx:
            await tx.execute("DELETE FROM slack_oauth_states WHERE expires_at < ?", (now,))
            await tx.execute(
                "INSERT INTO slack_oauth_states (state, expires_at) VALUES (?, ?)", (state, now + self._lifetime_s)
            )
        return state

    async def consume(self, state: str) -> bool:
        """True once for a state issued here and not expired (a replayed redirect gets False)."""
        async with self._db.transaction() as tx:
            rows = await tx.fetchall("SELECT expires_at FROM slack_oauth_states WHERE state = ?", (state,))
            if not rows:
                return False
            await tx.execute("DELETE FROM slack_oauth_states WHERE state = ?", (state,))
        return float(rows[0][0]) >= time.time()
