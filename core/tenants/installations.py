"""Slack installations and OAuth states on the council database, behind slack_sdk's asyncio store
interfaces, so bolt's OAuth flow, its per-team authorisation and its token rotation use them as they
are (bot/slack/oauth.py wires them in).

Each installation is kept whole (slack_sdk's own dict form) as Fernet ciphertext in `data`; the
plain columns are only the ids a lookup needs. One bot row per workspace or organisation (the
latest: a reinstall or a token rotation replaces it) and one installation row per installing user.
An org-wide (Enterprise Grid) install has no team: it is found by its enterprise id for every
workspace of the organisation. Replicas on one PostgreSQL database share all of it.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from typing import Any

from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.installation_store.models.installation import Installation
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore

from core.redact import Redactor
from core.storage.database import Database
from core.tenants.secrets import SecretBox

log = logging.getLogger(__name__)

STATE_LIFETIME_S = 600.0  # Slack's flow gives the installer ten minutes, as bolt's own stores do

# Times slack_sdk serialises as datetimes; its constructors take them back as numbers.
_TIMES = ("installed_at", "bot_token_expires_at", "user_token_expires_at")


def _keys(enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None) -> tuple[str, str]:
    """The stored ids: an org-wide install is the organisation's, whatever workspace asks."""
    return enterprise_id or "", "" if is_enterprise_install else (team_id or "")


def _plain(obj: Installation | Bot) -> dict[str, Any]:
    data = obj.to_dict_for_copying()
    for name in _TIMES:
        if name in data:
            data[name] = getattr(obj, name)
    return data


def _learn_tokens(obj: Installation | Bot) -> None:
    """Every token read or written becomes one the redaction filter masks (logs, errors, stored text)."""
    for name in ("bot_token", "bot_refresh_token", "user_token", "user_refresh_token"):
        value = getattr(obj, name, None)
        if value:
            Redactor.learn(value)


class SlackInstallationStore(AsyncInstallationStore):
    """slack_sdk's AsyncInstallationStore on the council database, tokens encrypted at rest."""

    def __init__(self, db: Database, box: SecretBox):
        self._db = db
        self._box = box

    @property
    def logger(self) -> logging.Logger:
        return log

    # ----------------------------------------------------------------- writes

    async def async_save(self, installation: Installation) -> None:
        _learn_tokens(installation)
        ent, team = _keys(installation.enterprise_id, installation.team_id, installation.is_enterprise_install)
        async with self._db.transaction() as tx:
            await tx.execute(
                """INSERT INTO slack_installations (enterprise_key, team_key, user_key, installed_at, data)
                   VALUES (?, ?, ?, ?, ?) ON CONFLICT (enterprise_key, team_key, user_key)
                   DO UPDATE SET installed_at = excluded.installed_at, data = excluded.data""",
                (ent, team, installation.user_id or "", installation.installed_at, self._seal(_plain(installation))),
            )
            if installation.bot_token:
                await self._save_bot(tx, installation.to_bot())

    async def async_save_bot(self, bot: Bot) -> None:
        _learn_tokens(bot)
        async with self._db.transaction() as tx:
            await self._save_bot(tx, bot)

    async def _save_bot(self, tx: Any, bot: Bot) -> None:
        ent, team = _keys(bot.enterprise_id, bot.team_id, bot.is_enterprise_install)
        await tx.execute(
            """INSERT INTO slack_bots (enterprise_key, team_key, installed_at, data) VALUES (?, ?, ?, ?)
               ON CONFLICT (enterprise_key, team_key) DO UPDATE SET installed_at = excluded.installed_at,
               data = excluded.data""",
            (ent, team, bot.installed_at, self._seal(_plain(bot))),
        )

    # ----------------------------------------------------------------- reads

    async def async_find_bot(
        self, *, enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None = False
    ) -> Bot | None:
        ent, team = _keys(enterprise_id, team_id, is_enterprise_install)
        rows = await self._db.fetchall(
            "SELECT data FROM slack_bots WHERE enterprise_key = ? AND team_key = ?", (ent, team)
        )
        if not rows:
            return None
        bot = Bot(**self._open(rows[0][0]))
        _learn_tokens(bot)
        return bot

    async def find_team_bot(self, team_id: str) -> Bot | None:
        """A workspace's bot whatever organisation it is in (a worker knows only the team of a council)."""
        rows = await self._db.fetchall(
            "SELECT data FROM slack_bots WHERE team_key = ? ORDER BY installed_at DESC LIMIT 1", (team_id,)
        )
        if not rows:
            return None
        bot = Bot(**self._open(rows[0][0]))
        _learn_tokens(bot)
        return bot

    async def async_find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        """The user's installation, or the workspace's latest when `user_id` is None; its bot
        fields are the workspace's current bot (a rotated token is saved on the bot row)."""
        ent, team = _keys(enterprise_id, team_id, is_enterprise_install)
        sql = "SELECT data FROM slack_installations WHERE enterprise_key = ? AND team_key = ?"
        params: list[Any] = [ent, team]
        if user_id is not None:
            sql += " AND user_key = ?"
            params.append(user_id)
        rows = await self._db.fetchall(sql + " ORDER BY installed_at DESC LIMIT 1", params)
        if not rows:
            return None
        data = self._open(rows[0][0])
        bot = await self.async_find_bot(
            enterprise_id=enterprise_id, team_id=team_id, is_enterprise_install=is_enterprise_install
        )
        if bot is not None:
            data.update(
                bot_token=bot.bot_token,
                bot_id=bot.bot_id,
                bot_user_id=bot.bot_user_id,
                bot_scopes=bot.bot_scopes,
                bot_refresh_token=bot.bot_refresh_token,
                bot_token_expires_at=bot.bot_token_expires_at,
            )
        installation = Installation(**data)
        _learn_tokens(installation)
        return installation

    # ----------------------------------------------------------------- deletes (uninstall, tokens_revoked)

    async def async_delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await self._db.execute(
            "DELETE FROM slack_bots WHERE enterprise_key = ? AND team_key = ?", (enterprise_id or "", team_id or "")
        )

    async def async_delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        sql = "DELETE FROM slack_installations WHERE enterprise_key = ? AND team_key = ?"
        params: list[Any] = [enterprise_id or "", team_id or ""]
        if user_id is not None:
            sql += " AND user_key = ?"
            params.append(user_id)
        await self._db.execute(sql, params)

    async def async_delete_all(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        async with self._db.transaction() as tx:
            params = (enterprise_id or "", team_id or "")
            await tx.execute("DELETE FROM slack_bots WHERE enterprise_key = ? AND team_key = ?", params)
            await tx.execute("DELETE FROM slack_installations WHERE enterprise_key = ? AND team_key = ?", params)

    async def teams(self) -> list[tuple[str, str]]:
        """(enterprise id, team id) of every stored bot ('' where absent)."""
        rows = await self._db.fetchall("SELECT enterprise_key, team_key FROM slack_bots ORDER BY installed_at")
        return [(r[0], r[1]) for r in rows]

    # ----------------------------------------------------------------- at rest

    def _seal(self, data: dict[str, Any]) -> str:
        return self._box.encrypt(json.dumps(data, default=str))

    def _open(self, sealed: str) -> dict[str, Any]:
        return json.loads(self._box.decrypt(sealed))


class SlackStateStore(AsyncOAuthStateStore):
    """The OAuth flow's `state` values: issued with the install link, consumed once by the redirect,
    on the database so that a redirect may reach another replica than the install page did."""

    def __init__(self, db: Database, lifetime_s: float = STATE_LIFETIME_S):
        self._db = db
        self._lifetime_s = lifetime_s

    @property
    def logger(self) -> logging.Logger:
        return log

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        state = secrets.token_urlsafe(32)
        now = time.time()
        async with self._db.transaction() as tx:
            await tx.execute("DELETE FROM slack_oauth_states WHERE expires_at < ?", (now,))
            await tx.execute(
                "INSERT INTO slack_oauth_states (state, expires_at) VALUES (?, ?)", (state, now + self._lifetime_s)
            )
        return state

    async def async_consume(self, state: str) -> bool:
        """True once for a state issued here and not expired (a replayed redirect gets False)."""
        async with self._db.transaction() as tx:
            rows = await tx.fetchall("SELECT expires_at FROM slack_oauth_states WHERE state = ?", (state,))
            if not rows:
                return False
            await tx.execute("DELETE FROM slack_oauth_states WHERE state = ?", (state,))
        return float(rows[0][0]) >= time.time()
