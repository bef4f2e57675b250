"""Per-channel overrides and the admin audit log."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from core.models import AuditEntry, ChannelSettings, Lens
from core.storage.database import Database, Row, Transaction
from core.storage.reconnect import reconnecting
from core.storage.values import dumps, now_iso


class ChannelRepository:
    def __init__(self, db: Database):
        self._db = db

    async def get(self, channel_key: str) -> ChannelSettings | None:
        rows = await self._db.fetchall("SELECT * FROM channel_settings WHERE channel_key = ?", (channel_key,))
        return _from_row(rows[0]) if rows else None

    @reconnecting
    async def put(self, settings: ChannelSettings, actor_id: str) -> None:
        """Insert or replace a channel's overrides (without an audit entry: imports and tests)."""
        async with self._db.transaction() as tx:
            await _upsert(tx, settings, actor_id)

    @reconnecting
    async def update(self, channel_key: str, changes: dict[str, Any], actor_id: str, action: str) -> ChannelSettings:
        """Merge `changes` into the channel's overrides and write the audit entry (`action`, with the
        changes as detail), in one transaction under the channel's lock: concurrent changes of
        different fields all survive, and the log holds exactly the changes that were made."""
        async with self._db.transaction() as tx:
            await tx.lock(f"channel:{channel_key}")
            rows = await tx.fetchall("SELECT * FROM channel_settings WHERE channel_key = ?", (channel_key,))
            current = _from_row(rows[0]) if rows else ChannelSettings(channel_key=channel_key)
            updated = ChannelSettings.model_validate(current.model_dump() | changes)  # lenses arrive as JSON
            await _upsert(tx, updated, actor_id)
            await _insert_audit(tx, channel_key, actor_id, action, changes)
        return updated

    @reconnecting
    async def delete(self, channel_key: str, actor_id: str | None = None) -> None:
        """Drop a channel's overrides; with `actor_id`, audit it as a reset in the same transaction."""
        async with self._db.transaction() as tx:
            await tx.execute("DELETE FROM channel_settings WHERE channel_key = ?", (channel_key,))
            if actor_id is not None:
                await _insert_audit(tx, channel_key, actor_id, "reset", {})

    @reconnecting
    async def audit(self, channel_key: str, actor_id: str, action: str, detail: dict) -> None:
        async with self._db.transaction() as tx:
            await _insert_audit(tx, channel_key, actor_id, action, detail)

    async def audit_log(self, channel_key: str | None = None, limit: int = 50) -> list[AuditEntry]:
        """Newest first."""
        sql, params = "SELECT at, channel_key, actor_id, action, detail FROM audit_log", []
        if channel_key is not None:
            sql += " WHERE channel_key = ?"
            params.append(channel_key)
        rows = await self._db.fetchall(sql + " ORDER BY id DESC LIMIT ?", (*params, max(0, limit)))
        return [
            AuditEntry(
                at=datetime.fromisoformat(r[0]), channel_key=r[1], actor_id=r[2], action=r[3], detail=json.loads(r[4])
            )
            for r in rows
        ]


async def _insert_audit(tx: Transaction, channel_key: str, actor_id: str, action: str, detail: dict) -> None:
    await tx.execute(
        "INSERT INTO audit_log (at, channel_key, actor_id, action, detail) "
        "VALUES (:at, :channel_key, :actor_id, :action, :detail)",
        {"at": now_iso(), "channel_key": channel_key, "actor_id": actor_id, "action": action, "detail": dumps(detail)},
    )


def _from_row(r: Row) -> ChannelSettings:
    return ChannelSettings(
        channel_key=r["channel_key"],
        members=json.loads(r["members"]) if r["members"] is not None else None,
        chairman=r["chairman"],
        user_limit_per_hour=r["user_limit_per_hour"],
        channel_limit_per_hour=r["channel_limit_per_hour"],
        daily_budget_usd=r["daily_budget_usd"],
        search=bool(r["search"]) if r["search"] is not None else None,
        mode=r["mode"],
        allowed_models=json.loads(r["allowed_models"]) if r["allowed_models"] is not None else None,
        unsure_mention=r["unsure_mention"],
        lenses=_lenses(r["lenses"]),
    )


def _lenses(value: str | None) -> dict[str, Lens] | None:
    if value is None:
        return None
    return {seat: Lens.model_validate(lens) for seat, lens in json.loads(value).items()}


async def _upsert(tx: Transaction, settings: ChannelSettings, actor_id: str) -> None:
    await tx.execute(
        """INSERT INTO channel_settings (channel_key, members, chairman, user_limit_per_hour,
           channel_limit_per_hour, daily_budget_usd, updated_at, updated_by, search, mode, allowed_models, lenses,
           unsure_mention)
           VALUES (:channel_key, :members, :chairman, :user_limit_per_hour, :channel_limit_per_hour,
           :daily_budget_usd, :updated_at, :updated_by, :search, :mode, :allowed_models, :lenses, :unsure_mention)
           ON CONFLICT (channel_key) DO UPDATE SET members = excluded.members, chairman = excluded.chairman,
           user_limit_per_hour = excluded.user_limit_per_hour,
           channel_limit_per_hour = excluded.channel_limit_per_hour,
           daily_budget_usd = excluded.daily_budget_usd, updated_at = excluded.updated_at,
           updated_by = excluded.updated_by, search = excluded.search, mode = excluded.mode,
           allowed_models = excluded.allowed_models, lenses = excluded.lenses,
           unsure_mention = excluded.unsure_mention""",
        {
            "channel_key": settings.channel_key,
            "members": dumps(settings.members) if settings.members is not None else None,
            "chairman": settings.chairman,
            "user_limit_per_hour": settings.user_limit_per_hour,
            "channel_limit_per_hour": settings.channel_limit_per_hour,
            "daily_budget_usd": settings.daily_budget_usd,
            "updated_at": now_iso(),
            "updated_by": actor_id,
            "search": int(settings.search) if settings.search is not None else None,
            "mode": settings.mode,
            "allowed_models": dumps(settings.allowed_models) if settings.allowed_models is not None else None,
            "unsure_mention": settings.unsure_mention,
            "lenses": dumps({seat: lens.model_dump(mode="json") for seat, lens in settings.lenses.items()})
            if settings.lenses is not None
            else None,
        },
    )
