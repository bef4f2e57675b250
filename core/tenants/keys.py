"""A tenant's rows: its own provider key (encrypted), endpoint and line-up, its daily budget, its
spend, and the purge of everything it has (councils with their votes and files, settings, keys,
installation). The key is sealed before it reaches SQL and opened only to build the tenant's router."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from core.models import CouncilResult, DailyUsage, PurgeCounts, TenantKeyInfo
from core.storage import totals
from core.storage.database import Database, Row, Transaction
from core.storage.values import dumps, iso, now_iso

KEY_TAIL = 4

# Where secrets are stored encrypted: (table, the columns naming a row, the ciphertext's column).
SEALED = (
    ("tenant_keys", ("tenant",), "api_key"),
    ("slack_bots", ("enterprise_key", "team_key"), "data"),
    ("slack_installations", ("enterprise_key", "team_key", "user_key"), "data"),
)


def split_tenant(tenant: str) -> tuple[str, str]:
    """`slack:T1` -> ("slack", "T1")."""
    platform, _, workspace = tenant.partition(":")
    return platform, workspace


class TenantStore:
    def __init__(self, db: Database):
        self._db = db

    # ----------------------------------------------------------------- keys

    async def put_key(
        self,
        tenant: str,
        sealed_key: str,
        key_tail: str,
        *,
        base_url: str | None,
        members: list[str] | None,
        chairman: str | None,
        actor_id: str,
    ) -> None:
        async with self._db.transaction() as tx:
            await tx.execute(
                """INSERT INTO tenant_keys (tenant, api_key, key_tail, base_url, members, chairman, updated_at,
                   updated_by) VALUES (:tenant, :api_key, :key_tail, :base_url, :members, :chairman, :at, :by)
                   ON CONFLICT (tenant) DO UPDATE SET api_key = excluded.api_key, key_tail = excluded.key_tail,
                   base_url = excluded.base_url, members = excluded.members, chairman = excluded.chairman,
                   updated_at = excluded.updated_at, updated_by = excluded.updated_by""",
                {
                    "tenant": tenant,
                    "api_key": sealed_key,
                    "key_tail": key_tail,
                    "base_url": base_url,
                    "members": dumps(members) if members else None,
                    "chairman": chairman,
                    "at": now_iso(),
                    "by": actor_id,
                },
            )
            await _audit(tx, tenant, actor_id, "tenant_key", {"key": f"…{key_tail}", "base_url": base_url})

    async def get_key(self, tenant: str) -> tuple[TenantKeyInfo, str] | None:
        """The key's public description and its ciphertext."""
        rows = await self._db.fetchall("SELECT * FROM tenant_keys WHERE tenant = ?", (tenant,))
        return (_info(rows[0]), rows[0]["api_key"]) if rows else None

    async def delete_key(self, tenant: str, actor_id: str) -> bool:
        async with self._db.transaction() as tx:
            removed = await tx.execute("DELETE FROM tenant_keys WHERE tenant = ?", (tenant,))
            if removed:
                await _audit(tx, tenant, actor_id, "tenant_key_removed", {})
        return bool(removed)

    # ----------------------------------------------------------------- secret rotation

    async def reseal(self, rotate: Any) -> int:
        """Every stored secret (tenant keys, installations, bots) re-encrypted by `rotate(ciphertext)`,
        in one transaction. Returns how many."""
        count = 0
        async with self._db.transaction() as tx:
            for table, key_columns, column in SEALED:
                rows = await tx.fetchall(f"SELECT {', '.join(key_columns)}, {column} FROM {table}")
                where = " AND ".join(f"{c} = ?" for c in key_columns)
                for row in rows:
                    keys = [row[i] for i in range(len(key_columns))]
                    await tx.execute(
                        f"UPDATE {table} SET {column} = ? WHERE {where}", (rotate(row[len(key_columns)]), *keys)
                    )
                    count += 1
        return count

    async def sealed(self) -> list[str]:
        """Every stored ciphertext (tenant keys, installations, bots)."""
        return [
            row[0] for table, _, column in SEALED for row in await self._db.fetchall(f"SELECT {column} FROM {table}")
        ]

    # ----------------------------------------------------------------- budgets and spend

    async def set_budget(self, tenant: str, daily_budget_usd: float | None, actor_id: str) -> None:
        async with self._db.transaction() as tx:
            if daily_budget_usd is None:
                await tx.execute("DELETE FROM tenant_budgets WHERE tenant = ?", (tenant,))
            else:
                await tx.execute(
                    """INSERT INTO tenant_budgets (tenant, daily_budget_usd, updated_at) VALUES (?, ?, ?)
                       ON CONFLICT (tenant) DO UPDATE SET daily_budget_usd = excluded.daily_budget_usd,
                       updated_at = excluded.updated_at""",
                    (tenant, daily_budget_usd, now_iso()),
                )
            await _audit(tx, tenant, actor_id, "tenant_budget", {"daily_budget_usd": daily_budget_usd})

    async def budget(self, tenant: str) -> float | None:
        rows = await self._db.fetchall("SELECT daily_budget_usd FROM tenant_budgets WHERE tenant = ?", (tenant,))
        return float(rows[0][0]) if rows else None

    async def spent_since(self, tenant: str, since: datetime) -> float:
        platform, workspace = split_tenant(tenant)
        rows = await self._db.fetchall(
            "SELECT COALESCE(SUM(cost_usd), 0) FROM councils "
            "WHERE platform = ? AND workspace_id = ? AND created_at >= ?",
            (platform, workspace, iso(since)),
        )
        return float(rows[0][0])

    async def usage_by_day(self, tenant: str, since: datetime) -> list[DailyUsage]:
        platform, workspace = split_tenant(tenant)
        rows = await self._db.fetchall(
            """SELECT substr(created_at, 1, 10) AS day, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens),
                      COALESCE(SUM(cost_usd), 0) FROM councils
               WHERE platform = ? AND workspace_id = ? AND created_at >= ? GROUP BY day ORDER BY day""",
            (platform, workspace, iso(since)),
        )
        return [
            DailyUsage(
                day=r[0], councils=r[1], prompt_tokens=int(r[2] or 0), completion_tokens=int(r[3] or 0), cost_usd=r[4]
            )
            for r in rows
        ]

    # ----------------------------------------------------------------- purge

    async def purge(self, tenant: str, actor_id: str) -> PurgeCounts:
        """Everything of `tenant` in one transaction, and one audit line saying what went."""
        platform, workspace = split_tenant(tenant)
        counts = PurgeCounts(tenant=tenant)
        async with self._db.transaction() as tx:
            await tx.lock(f"tenant:{tenant}")
            where, params = "platform = ? AND workspace_id = ?", (platform, workspace)
            for row in await tx.fetchall(f"SELECT result FROM councils WHERE {where} AND result IS NOT NULL", params):
                await totals.apply(tx, CouncilResult.model_validate_json(row[0]), -1)  # out of the leaderboard
            # Answers, reviews, ballots, votes, files and steps go with each council (ON DELETE CASCADE).
            counts.councils = await tx.execute(f"DELETE FROM councils WHERE {where}", params)
            await tx.execute("DELETE FROM council_deliveries WHERE council_id NOT IN (SELECT id FROM councils)")
            await tx.execute("DELETE FROM council_jobs WHERE council_id NOT IN (SELECT id FROM councils)")
            await tx.execute("DELETE FROM council_messages WHERE council_id NOT IN (SELECT id FROM councils)")
            prefix = f"{platform}:{workspace}:%"
            counts.channel_settings = await tx.execute(
                "DELETE FROM channel_settings WHERE channel_key LIKE ?", (prefix,)
            )
            await tx.execute("DELETE FROM rate_hits WHERE key LIKE ?", (prefix,))
            counts.keys = await tx.execute("DELETE FROM tenant_keys WHERE tenant = ?", (tenant,))
            await tx.execute("DELETE FROM tenant_budgets WHERE tenant = ?", (tenant,))
            if platform == "slack":
                counts.installations = await _delete_installations(tx, workspace)
            await _audit(tx, tenant, actor_id, "purge", counts.model_dump(exclude={"tenant"}))
        return counts


async def _delete_installations(tx: Transaction, workspace: str) -> int:
    """A workspace's installations (in or out of an organisation), or an organisation's org-wide one."""
    where = "team_key = ? OR (team_key = '' AND enterprise_key = ?)"
    await tx.execute(f"DELETE FROM slack_bots WHERE {where}", (workspace, workspace))
    return await tx.execute(f"DELETE FROM slack_installations WHERE {where}", (workspace, workspace))


async def _audit(tx: Transaction, tenant: str, actor_id: str, action: str, detail: dict) -> None:
    """One admin audit line per change, under the tenant's key (`slack:T1`)."""
    await tx.execute(
        "INSERT INTO audit_log (at, channel_key, actor_id, action, detail) VALUES (?, ?, ?, ?, ?)",
        (now_iso(), tenant, actor_id, action, dumps(detail)),
    )


def _info(r: Row) -> TenantKeyInfo:
    return TenantKeyInfo(
        tenant=r["tenant"],
        key_tail=r["key_tail"],
        base_url=r["base_url"],
        members=json.loads(r["members"]) if r["members"] else None,
        chairman=r["chairman"],
        updated_at=datetime.fromisoformat(r["updated_at"]).astimezone(UTC),
        updated_by=r["updated_by"],
    )
