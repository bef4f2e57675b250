"""`/council-admin ...` (and `/council admin ...`): per-channel council settings.

Parsing is pure (`parse_admin`); `handle_admin` calls the service, which checks permissions
(Actor.is_platform_admin comes from users.info: workspace admins and owners) and writes the
audit log. `show` is read-only and open to everyone in the channel.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.slack import render
from core.errors import InputRejected
from core.models import Actor, Origin
from core.models.doubt import mention_target
from core.models.voice import lens_line

if TYPE_CHECKING:
    from core.service import CouncilService

OPERATIONS = ("show", "members", "chairman", "allow", "limits", "search", "mode", "lens", "unsure", "reset", "audit")
# A mention as a slash command's text carries it (its "escape users and channels" option): a user
# group `<!subteam^S0123|@team>` or a user `<@U0123|name>`.
_MENTION = re.compile(r"^<(?:!subteam\^(?P<group>[A-Z0-9]+)|@(?P<user>[UW][A-Z0-9]+))(?:\|[^>]*)?>$")

USAGE = """*Council admin* (this channel; workspace admins and owners, or `COUNCIL_ADMIN_USERS`):
• `/council-admin show` — the members, chairman and limits in effect here
• `/council-admin members model-a, model-b|fallback-b` — this channel's members (2 to 8 seats; \
in a seat `a|b`, b answers when a fails)
• `/council-admin chairman model-x` — this channel's chairman (also `model-x|fallback`)
• `/council-admin allow model-a, model-b` — the models a question here may choose \
(`members: a, b; chairman: c`); `allow default`: this channel's members, fallbacks and chairman
• `/council-admin mode quick|auto|refine|self-moa|best|standard` — this channel's default mode (a question \
can also start with `quick:`, `auto:`, `refine:`, `self-moa:`, `best:` or `standard:`)
• `/council-admin lens model-a skeptic` — a member's lens: a preset (skeptic, first-principles, on-call, \
pragmatist, teacher) or a persona's text; `lens model-a off` removes it
• `/council-admin unsure @group` — mention this user group (or `@person`) in the thread when an answer \
here is unsure; `unsure off`: nobody
• `/council-admin limits user=N channel=N budget=USD` — councils per user/channel per hour, daily budget
• `/council-admin search on|off` — search the web before each council here (a question can also start with `search:`)
• `/council-admin reset` — back to the defaults
• `/council-admin audit [N]` — recent admin changes here"""

_LIMIT_KEYS = {
    "user": "user_per_hour",
    "users": "user_per_hour",
    "user_per_hour": "user_per_hour",
    "channel": "channel_per_hour",
    "channel_per_hour": "channel_per_hour",
    "budget": "daily_budget_usd",
    "daily_budget": "daily_budget_usd",
    "daily_budget_usd": "daily_budget_usd",
}


@dataclass
class AdminCommand:
    op: str
    members: list[str] = field(default_factory=list)
    chairman: str = ""
    limits: dict[str, float | int] = field(default_factory=dict)
    count: int = 20
    search: bool = False
    mode: str = ""
    mention: str | None = None  # `kind:id` (core/models/doubt.py); None: nobody
    persona: str = ""


def parse_admin(text: str) -> AdminCommand:
    """The admin operation in `text`; InputRejected (with the usage) when it cannot be read."""
    words = (text or "").strip().split(None, 1)
    if not words or words[0].lower() in ("help", "?"):
        raise InputRejected(USAGE)
    op, rest = words[0].lower(), (words[1].strip() if len(words) > 1 else "")
    if op not in OPERATIONS:
        raise InputRejected(f"Unknown admin command `{render.plain(op)}`.\n{USAGE}")
    if op in ("show", "reset"):
        return AdminCommand(op)
    if op == "members":
        members = [m for m in re.split(r"[\s,]+", rest) if m]
        if not members:
            raise InputRejected("Name the members: `/council-admin members model-a, model-b, model-c`.")
        return AdminCommand(op, members=members)
    if op == "chairman":
        if not rest or len(rest.split()) != 1:
            raise InputRejected("Name one model: `/council-admin chairman model-x`.")
        return AdminCommand(op, chairman=rest)
    if op == "allow":
        if not rest:
            raise InputRejected("Name the models: `/council-admin allow model-a, model-b` (or `allow default`).")
        models = [] if rest.lower() == "default" else rest.replace(",", " ").split()
        return AdminCommand(op, members=models)
    if op == "search":
        if rest.lower() not in ("on", "off"):
            raise InputRejected("Say `/council-admin search on` or `/council-admin search off`.")
        return AdminCommand(op, search=rest.lower() == "on")
    if op == "mode":
        if not rest:
            raise InputRejected("Say `/council-admin mode quick`, `auto` or `standard`.")
        return AdminCommand(op, mode=rest)
    if op == "unsure":
        return AdminCommand(op, mention=_mention(rest))
    if op == "lens":
        seat, _, persona = rest.partition(" ")
        if not seat or not persona.strip():
            raise InputRejected(
                "Say `/council-admin lens model-a skeptic` (a preset or a persona), or `lens model-a off`."
            )
        return AdminCommand(op, members=[seat], persona=persona.strip())
    if op == "audit":
        if not rest:
            return AdminCommand(op)
        if not rest.isdigit() or not 1 <= int(rest) <= 50:
            raise InputRejected("`/council-admin audit [N]` takes a number of entries from 1 to 50.")
        return AdminCommand(op, count=int(rest))
    return AdminCommand(op, limits=_parse_limits(rest))


def _mention(rest: str) -> str | None:
    if rest.lower() == "off":
        return None
    found = _MENTION.match(rest.strip())
    if found is None:
        raise InputRejected("Say `/council-admin unsure @group` (a user group or a person), or `unsure off`.")
    return mention_target("group", found["group"]) if found["group"] else mention_target("user", found["user"])


def _parse_limits(rest: str) -> dict[str, float | int]:
    """`user=N channel=N budget=USD` (any of them, spaces or commas between)."""
    limits: dict[str, float | int] = {}
    for item in rest.replace(",", " ").split():
        key, sep, value = item.partition("=")
        name = _LIMIT_KEYS.get(key.strip().lower())
        if not sep or name is None:
            raise InputRejected(f"Cannot read `{render.plain(item)}`: use `user=N channel=N budget=USD`.")
        value = value.strip().lstrip("$")
        try:
            limits[name] = float(value) if name == "daily_budget_usd" else int(value)
        except ValueError:
            needed = "an amount in USD" if name == "daily_budget_usd" else "a whole number"
            raise InputRejected(f"`{render.plain(item)}`: {needed} is needed.") from None
    if not limits:
        raise InputRejected("Give at least one of `user=N`, `channel=N` (councils per hour), `budget=USD` (per day).")
    return limits


async def handle_admin(service: CouncilService, actor: Actor, origin: Origin, command: AdminCommand) -> render.Message:
    """Run one admin operation; refusals (PermissionDenied, UnknownModels, ...) propagate."""
    title = "Council for this channel"
    if command.op == "show":
        config = await service.channels.effective_config(origin)
        return render.config_message(title, config, await service.channels.channel_settings(origin))
    if command.op == "members":
        config = await service.channels.set_members(actor, origin, command.members)
        return render.config_message("Members updated", config)
    if command.op == "chairman":
        config = await service.channels.set_chairman(actor, origin, command.chairman)
        return render.config_message("Chairman updated", config)
    if command.op == "allow":
        allowed = await service.channels.set_allowed(actor, origin, command.members)
        text = "A question here may choose: " + ", ".join(f"`{m}`" for m in allowed)
        return {"text": text, "blocks": [render.section(text)]}
    if command.op == "limits":
        updated = await service.channels.set_limits(actor, origin, **command.limits)  # type: ignore[arg-type]
        return render.config_message("Limits updated", await service.channels.effective_config(origin), updated)
    if command.op == "search":
        updated = await service.channels.set_search(actor, origin, command.search)
        word = "on: each council here searches the web first" if updated.search else "off"
        return render.config_message(f"Web search {word}", await service.channels.effective_config(origin), updated)
    if command.op == "mode":
        updated = await service.channels.set_mode(actor, origin, command.mode)
        return render.config_message(f"Mode: {updated.mode}", await service.channels.effective_config(origin), updated)
    if command.op == "unsure":
        await service.channels.set_unsure_mention(actor, origin, command.mention)
        said = render.unsure_mention_set(command.mention)
        return {"text": said, "blocks": [render.section(said)]}
    if command.op == "lens":
        lens = await service.channels.set_lens(actor, origin, command.members[0], command.persona)
        said = lens_line(lens) or "no lens"
        text = f"`{render.plain(command.members[0])}` here: {render.plain(said)}"
        return {"text": text, "blocks": [render.section(text)]}
    if command.op == "reset":
        await service.channels.reset(actor, origin)
        config = await service.channels.effective_config(origin)
        return render.config_message(
            "Channel settings reset to the defaults", config, await service.channels.channel_settings(origin)
        )
    entries = await service.channels.audit_log(actor, origin, command.count)
    return render.audit_message(entries)
