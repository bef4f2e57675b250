"""Admin operations on a channel's council: members, chairman, limits, the models askers may choose
per question, reset, audit log.

Each checks Permissions.require_admin first; every change is audited. `allowed_models` and
`check_choice` are the rule on a question's own members and chairman, which admission
applies: the channel's list, else its members, their fallbacks and its chairman."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from core.channels.permissions import Permissions
from core.errors import InputRejected, UnknownModels
from core.models import Actor, AuditEntry, ChannelSettings, CouncilConfig, Lens, Origin, seats
from core.models.deliberation import lens_of
from core.models.doubt import mention_target, split_mention
from core.models.keywords import parse_mode
from core.models.text import clean_text
from core.providers.router import ProviderRouter
from core.storage import Storage

MAX_MEMBERS = 8


class ChannelAdmin:
    def __init__(
        self,
        storage: Storage,
        router_at: Callable[[Origin], Awaitable[ProviderRouter]],
        permissions: Permissions,
        config_at: Callable[[Origin, ChannelSettings | None], Awaitable[CouncilConfig]],
    ) -> None:
        self.storage = storage
        # Tenants.router_at: model ids are checked against the endpoint the channel's councils call,
        # its workspace's own when it set a key.
        self._router_at = router_at
        self.permissions = permissions
        self._config_at = config_at  # Admission.effective_config: the channel's, its tenant's, the operator's

    async def effective_config(self, origin: Origin) -> CouncilConfig:
        """The council a question asked at `origin` would get (before the request's own choices)."""
        return await self._config_at(origin, await self.storage.channels.get(origin.channel_key))

    async def channel_settings(self, origin: Origin) -> ChannelSettings:
        found = await self.storage.channels.get(origin.channel_key)
        return found or ChannelSettings(channel_key=origin.channel_key)

    async def set_members(self, actor: Actor, origin: Origin, members: Sequence[str]) -> CouncilConfig:
        self.permissions.require_admin(actor, origin.platform)
        cleaned = clean_members(members)
        await require_known_models(await self._router_at(origin), seats.all_models(cleaned))
        await self._save_channel(actor, origin, {"members": cleaned}, "set_members")
        return await self.effective_config(origin)

    async def set_chairman(self, actor: Actor, origin: Origin, chairman: str) -> CouncilConfig:
        self.permissions.require_admin(actor, origin.platform)
        chairman = seats.clean_seat(chairman)
        if not chairman:
            raise InputRejected("Name the chairman's model id.")
        await require_known_models(await self._router_at(origin), seats.seat_models(chairman))
        await self._save_channel(actor, origin, {"chairman": chairman}, "set_chairman")
        return await self.effective_config(origin)

    async def set_limits(
        self,
        actor: Actor,
        origin: Origin,
        *,
        user_per_hour: int | None = None,
        channel_per_hour: int | None = None,
        daily_budget_usd: float | None = None,
    ) -> ChannelSettings:
        self.permissions.require_admin(actor, origin.platform)
        update: dict[str, object] = {}
        for name, value in (
            ("user_limit_per_hour", user_per_hour),
            ("channel_limit_per_hour", channel_per_hour),
            ("daily_budget_usd", daily_budget_usd),
        ):
            if value is None:
                continue
            if value < 0:
                raise InputRejected(f"{name.replace('_', ' ')} cannot be negative.")
            update[name] = value
        if not update:
            raise InputRejected("Give at least one of: user=N, channel=N (councils per hour), budget=USD (per day).")
        return await self._save_channel(actor, origin, update, "set_limits")

    async def set_search(self, actor: Actor, origin: Origin, enabled: bool) -> ChannelSettings:
        """Turn web search before stage 1 on or off for the channel's councils."""
        self.permissions.require_admin(actor, origin.platform)
        return await self._save_channel(actor, origin, {"search": enabled}, "set_search")

    async def set_mode(self, actor: Actor, origin: Origin, mode: str) -> ChannelSettings:
        """The channel's default mode: standard (three stages), quick (two answers compared) or auto
        (two answers; the whole council when they disagree)."""
        self.permissions.require_admin(actor, origin.platform)
        return await self._save_channel(actor, origin, {"mode": parse_mode(mode)}, "set_mode")

    async def set_unsure_mention(self, actor: Actor, origin: Origin, target: str | None) -> ChannelSettings:
        """Who is mentioned in the thread when an answer here is unsure (`kind:id`, core/models/doubt.py);
        None: nobody."""
        self.permissions.require_admin(actor, origin.platform)
        if target is not None:
            try:
                target = mention_target(*split_mention(target))
            except ValueError as exc:
                raise InputRejected(str(exc)) from None
        return await self._save_channel(actor, origin, {"unsure_mention": target}, "set_unsure_mention")

    async def set_lens(self, actor: Actor, origin: Origin, seat: str, persona: str) -> Lens | None:
        """A member's lens in this channel: a preset's name or a persona (at most PERSONA_MAX_CHARS);
        `off` (or nothing) removes it. The seat must be one of the channel's members."""
        self.permissions.require_admin(actor, origin.platform)
        channel = await self.channel_settings(origin)
        config = await self._config_at(origin, channel)
        cleaned = seats.clean_seat(seat)
        if cleaned not in config.members:
            listed = ", ".join(f"`{m}`" for m in config.members)
            raise InputRejected(f"`{cleaned or seat.strip()}` is not a member here: the members are {listed}.")
        lenses = {s: lens.model_dump(mode="json") for s, lens in (channel.lenses or {}).items()}
        off = persona.strip().lower() in ("", "off", "none")
        try:
            lens = None if off else lens_of(clean_text(persona))
        except ValueError as exc:
            raise InputRejected(str(exc)) from None
        if lens is None:
            lenses.pop(cleaned, None)
        else:
            lenses[cleaned] = lens.model_dump(mode="json", exclude_none=True)
        await self._save_channel(actor, origin, {"lenses": lenses or None}, "set_lens")
        return lens

    async def set_allowed(self, actor: Actor, origin: Origin, models: Sequence[str]) -> list[str]:
        """The models askers in the channel may choose per question (`members: a, b; chairman: c`);
        an empty list goes back to the default (the channel's members, fallbacks and chairman)."""
        self.permissions.require_admin(actor, origin.platform)
        cleaned = list(dict.fromkeys(m for m in (seats.clean_seat(m) for m in models) if m and "|" not in m))
        if cleaned:
            await require_known_models(await self._router_at(origin), cleaned)
        await self._save_channel(actor, origin, {"allowed_models": cleaned or None}, "set_allowed")
        return await self.allowed(origin)

    async def allowed(self, origin: Origin) -> list[str]:
        """The models a question asked at `origin` may choose as its members and chairman."""
        channel = await self.storage.channels.get(origin.channel_key)
        return allowed_models(await self._config_at(origin, channel), channel)

    async def reset(self, actor: Actor, origin: Origin) -> None:
        self.permissions.require_admin(actor, origin.platform)
        await self.storage.channels.delete(origin.channel_key, actor_id=actor.user_id)

    async def audit_log(self, actor: Actor, origin: Origin, limit: int = 20) -> list[AuditEntry]:
        self.permissions.require_admin(actor, origin.platform)
        return await self.storage.channels.audit_log(origin.channel_key, limit)

    async def _save_channel(
        self, actor: Actor, origin: Origin, changes: dict[str, Any], action: str
    ) -> ChannelSettings:
        """Apply `changes` to the channel's overrides and audit them, as one step in the database
        (two admins changing different fields at once both keep their change)."""
        return await self.storage.channels.update(origin.channel_key, changes, actor.user_id, action)


def clean_members(members: Sequence[str]) -> list[str]:
    """Seats (`primary|fallback|...`), each written the one way, without blanks or repeats."""
    cleaned = list(dict.fromkeys(s for s in map(seats.clean_seat, members) if s))
    if len(cleaned) < 2:
        raise InputRejected(
            "A council needs at least 2 members (comma- or space-separated model ids; "
            "a seat with fallbacks is `primary|fallback`)."
        )
    if len(cleaned) > MAX_MEMBERS:
        raise InputRejected(f"At most {MAX_MEMBERS} members; you named {len(cleaned)}.")
    return cleaned


async def require_known_models(router: ProviderRouter, models: list[str]) -> None:
    unknown = await router.unknown_models(models)
    if unknown:
        raise UnknownModels(
            "Unknown model id(s): "
            + ", ".join(f"`{m}`" for m in unknown)
            + ". Check the spelling against your provider's model list (`council doctor` lists problems).",
            unknown,
        )


def allowed_models(config: CouncilConfig, channel: ChannelSettings | None) -> list[str]:
    """The models a question may choose (the channel's list, else its council's every model)."""
    if channel is not None and channel.allowed_models:
        return list(channel.allowed_models)
    return seats.all_models([*config.members, config.chairman])


def check_choice(allowed: Sequence[str], members: Sequence[str] | None, chairman: str | None) -> None:
    """Refuse a question's members or chairman outside `allowed`, naming the allowed models."""
    named = seats.all_models([*(members or []), *([chairman] if chairman else [])])
    refused = [m for m in dict.fromkeys(named) if m not in allowed]
    if refused:
        raise InputRejected(
            f"{', '.join(f'`{m}`' for m in refused)} {'is' if len(refused) == 1 else 'are'} not allowed here; "
            f"this channel allows: {', '.join(allowed)}."
        )
