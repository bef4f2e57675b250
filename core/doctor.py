"""Health checks behind `council doctor`: configuration, keys, model ids, database."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from core import seats
from core.errors import ConfigurationError
from core.providers.base import ProviderError
from core.storage import redact_url
from core.weights import require_known_weights


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    warning: bool = False  # not fatal, but worth knowing


async def diagnose(service) -> list[Check]:
    s = service.settings
    checks: list[Check] = []
    if s.uses_local_defaults:
        checks.append(Check("provider", True, "no key configured: using the bundled offline models", warning=True))
        have_llama = importlib.util.find_spec("llama_cpp") is not None
        checks.append(
            Check(
                "local models",
                have_llama,
                "llama-cpp-python installed" if have_llama else "install with: pip install -e '.[local]'",
            )
        )
    else:
        where = s.llm_base_url or s.openrouter_base_url
        key = s.llm_api_key if s.llm_base_url else s.openrouter_api_key
        checks.append(Check("provider", True, f"endpoint {where}"))
        checks.append(
            Check(
                "api key",
                key is not None,
                "set" if key else "missing (LLM_API_KEY / OPENROUTER_API_KEY)",
                warning=key is None,
            )
        )
    members, chairman = s.default_members, s.default_chairman
    try:
        # A seat (`primary|fallback`) is checked model by model.
        models = [model for seat in (*members, chairman) for model in seats.seat_models(seat)]
        unknown = await service.router.unknown_models(list(dict.fromkeys(models)))
        checks.append(
            Check(
                "model ids",
                not unknown,
                "all known to the provider: " + ", ".join(members) + f"; chairman {chairman}"
                if not unknown
                else "unknown: " + ", ".join(unknown),
            )
        )
    except ProviderError as exc:
        checks.append(Check("model ids", False, f"could not list models: {exc.info().short()}"))
    if isinstance(s.council_reviewer_weights, dict) and s.council_reviewer_weights:
        try:
            await require_known_weights(s, service.router)
            checks.append(Check("reviewer weights", True, "every weighted id is known to the provider"))
        except (ConfigurationError, ProviderError) as exc:
            message = exc.user_message if isinstance(exc, ConfigurationError) else exc.info().short()
            checks.append(Check("reviewer weights", False, message))
    try:
        version = await service.storage.schema_version()
        recent = await service.storage.list_councils(limit=1)
        checks.append(
            Check(
                "database",
                True,
                f"{service.storage.backend} {service.storage.location} "
                f"(schema v{version}, {'has' if recent else 'no'} councils)",
            )
        )
    except Exception as exc:  # any storage failure is the finding itself
        checks.append(Check("database", False, f"{redact_url(s.database_url)}: {exc}"))
    checks.append(
        Check(
            "slack",
            True,
            "configured" if s.slack_bot_token else "not configured (SLACK_BOT_TOKEN)",
            warning=not s.slack_bot_token,
        )
    )
    checks.append(
        Check(
            "discord",
            True,
            "configured" if s.discord_token else "not configured (DISCORD_TOKEN)",
            warning=not s.discord_token,
        )
    )
    return checks
