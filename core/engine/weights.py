"""The weight of each reviewer's ballot in a council (COUNCIL_REVIEWER_WEIGHTS).

- a JSON object {"model id": weight}: those weights, every other reviewer 1; the ids must be
  models the provider knows (else a ConfigurationError naming them);
- `auto`: from each reviewer's stored agreement with the consensus, the mean Kendall tau of its
  ballots against their councils' aggregate (core/storage/reviewer_totals.py), shrunk toward 1 for
  few ballots: weight = max(MIN_WEIGHT, 1 + n / (n + SHRINK_BALLOTS) * mean tau); a reviewer
  with no stored ballot weighs 1.
- unset: every reviewer 1.
The weights used are stored with the council (CouncilConfig.reviewer_weights).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.errors import ConfigurationError
from core.providers.base import ProviderConfigError

if TYPE_CHECKING:
    from core.providers.router import ProviderRouter
    from core.settings import Settings
    from core.storage import Storage

SHRINK_BALLOTS = 10  # with this many stored ballots, the agreement counts half
MIN_WEIGHT = 0.1


def auto_weight(tau_sum: float, ballots: int) -> float:
    if ballots <= 0:
        return 1.0
    return max(MIN_WEIGHT, 1.0 + ballots / (ballots + SHRINK_BALLOTS) * (tau_sum / ballots))


async def reviewer_weights(
    settings: Settings, storage: Storage, router: ProviderRouter, members: Sequence[str]
) -> dict[str, float]:
    """The weight of each of `members` (empty when no weighting is configured)."""
    configured = settings.council_reviewer_weights
    if configured == "auto":
        totals = await storage.reviewer_totals()
        return {m: round(auto_weight(totals[m].tau_sum, totals[m].tau_n), 4) if m in totals else 1.0 for m in members}
    if not configured:
        return {}
    await require_known_weights(settings, router)
    return {m: float(configured.get(m, 1.0)) for m in members}


async def require_known_weights(settings: Settings, router: ProviderRouter) -> None:
    """ConfigurationError naming the ids of COUNCIL_REVIEWER_WEIGHTS that no provider knows."""
    configured = settings.council_reviewer_weights
    unknown: list[str] = []
    for model in configured if isinstance(configured, dict) else ():
        try:
            unknown += await router.unknown_models([model])
        except ProviderConfigError:  # no provider is set up for this id: unknown as well
            unknown.append(model)
    if unknown:
        raise ConfigurationError(
            "COUNCIL_REVIEWER_WEIGHTS names unknown model id(s): "
            + ", ".join(f"`{m}`" for m in unknown)
            + ". Use ids your provider lists (`council doctor` checks them)."
        )
