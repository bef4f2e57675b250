"""slack_sdk's asyncio installation and state store interfaces over the council database
(`service.tenants.installations` / `.oauth_states`, core/tenants/installations.py), for bolt's
OAuth flow, its per-team authorisation and its token rotation.

An org-wide (Enterprise Grid) install has no team: it is stored under its enterprise id and found
for every workspace of the organisation, as slack_sdk's own stores do.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.installation_store.models.installation import Installation
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore

if TYPE_CHECKING:
    from core.service import CouncilService

log = logging.getLogger(__name__)

# Times slack_sdk serialises as datetimes; its constructors take them back as numbers.
_TIMES = ("installed_at", "bot_token_expires_at", "user_token_expires_at")
_BOT_FIELDS = ("bot_token", "bot_id", "bot_user_id", "bot_scopes", "bot_refresh_token", "bot_token_expires_at")


def _keys(enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None) -> tuple[str, str]:
    """The stored ids: an org-wide install is the organisation's, whatever workspace asks."""
    return enterprise_id or "", "" if is_enterprise_install else (team_id or "")


def _plain(obj: Installation | Bot) -> dict[str, Any]:
    data = obj.to_dict_for_copying()
    for name in _TIMES:
        if name in data:
            data[name] = getattr(obj, name)
    return data


class SlackInstallationStore(AsyncInstallationStore):
    def __init__(self, service: CouncilService):
        self._records = service.tenants.installations

    @property
    def logger(self) -> logging.Logger:
        return log

    async def async_save(self, installation: Installation) -> None:
        ent, team = _keys(installation.enterprise_id, installation.team_id, installation.is_enterprise_install)
        bot = _plain(installation.to_bot()) if installation.bot_token else None
        await self._records.save(
            ent, team, installation.user_id or "", installation.installed_at, _plain(installation), bot
        )

    async def async_save_bot(self, bot: Bot) -> None:
        ent, team = _keys(bot.enterprise_id, bot.team_id, bot.is_enterprise_install)
        await self._records.save_bot(ent, team, bot.installed_at, _plain(bot))

    async def async_find_bot(
        self, *, enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None = False
    ) -> Bot | None:
        data = await self._records.find_bot(*_keys(enterprise_id, team_id, is_enterprise_install))
        return Bot(**data) if data is not None else None

    async def find_serving_bot(
        self, *, enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool
    ) -> Bot | None:
        """The bot that writes in workspace `team_id` when no request authorises it (a worker's
        council): the one bolt's authorisation finds from these ids, else its organisation's
        org-wide install, which answers for every workspace of it. Without the organisation (a
        council queued before it was kept with the job), the workspace's own install."""
        if enterprise_id is None:
            data = await self._records.find_team_bot(team_id) if team_id else None
            return Bot(**data) if data is not None else None
        found = await self.async_find_bot(
            enterprise_id=enterprise_id, team_id=team_id, is_enterprise_install=is_enterprise_install
        )
        if found is None and not is_enterprise_install:
            found = await self.async_find_bot(enterprise_id=enterprise_id, team_id=None, is_enterprise_install=True)
        return found

    async def async_find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        """The user's installation (or the workspace's latest), with the workspace's current bot
        (a rotated token is saved on the bot row)."""
        ent, team = _keys(enterprise_id, team_id, is_enterprise_install)
        data = await self._records.find_installation(ent, team, user_id)
        if data is None:
            return None
        bot = await self._records.find_bot(ent, team)
        if bot is not None:
            data.update({name: bot.get(name) for name in _BOT_FIELDS})
        return Installation(**data)

    async def async_delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await self._records.delete_bot(enterprise_id or "", team_id or "")

    async def async_delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        await self._records.delete_installation(enterprise_id or "", team_id or "", user_id)


class SlackStateStore(AsyncOAuthStateStore):
    def __init__(self, service: CouncilService):
        self._states = service.tenants.oauth_states

    @property
    def logger(self) -> logging.Logger:
        return log

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        return await self._states.issue()

    async def async_consume(self, state: str) -> bool:
        return await self._states.consume(state)
