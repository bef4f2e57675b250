"""The weight of each reviewer's ballot in a council (COUNCIL_REVIEWER_WEIGHTS).

- a JSON object {"model id": weight}: those weights, every other reviewer 1; each id must be a
  member's (a seat of COUNCIL_MODELS or of the council, or a model of one), else a
  ConfigurationError naming the members; checked without asking any provider;
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
from core.models import seats

if TYPE_CHECKING:
    from core.settings import Settings
    from core.storage import Storage

SHRINK_BALLOTS = 10  # with this many stored ballots, the agreement counts half
MIN_WEIGHT = 0.1


def auto_weight(tau_sum: float, ballots: int) -> float:
    if ballots <= 0:
        return 1.0
    return max(MIN_WEIGHT, 1.0 + ballots / (ballots + SHRINK_BALLOTS) * (tau_sum / ballots))


async def reviewer_weights(settings: Settings, storage: Storage, members: Sequence[str]) -> dict[str, float]:
    """The weight of each of `members` (seats; empty when no weighting is configured)."""
    configured = settings.council.reviewer_weights
    if configured == "auto":
        totals = await storage.reviewer_totals()
        return {m: round(auto_weight(totals[m].tau_sum, totals[m].tau_n), 4) if m in totals else 1.0 for m in members}
    if not configured:
        return {}
    require_member_weights(settings, members)
    return {m: _seat_weight(configured, m) for m in members}


def require_member_weights(settings: Settings, members: Sequence[str] = ()) -> None:
    """ConfigurationError naming the ids of COUNCIL_REVIEWER_WEIGHTS that are no member's: neither a
    seat of COUNCIL_MODELS (or of `members`, this council's) nor a model of one. No provider is asked:
    a member is an id the council calls, whether or not an endpoint's model list shows it."""
    configured = settings.council.reviewer_weights
    if not isinstance(configured, dict) or not configured:
        return
    seat_list = list(dict.fromkeys([*settings.default_members, *members]))
    known = set(seat_list) | set(seats.all_models(seat_list))
    unknown = [model for model in configured if model not in known]
    if unknown:
        raise ConfigurationError(
            "COUNCIL_REVIEWER_WEIGHTS names "
            + ", ".join(f"`{m}`" for m in unknown)
            + ", which is no member's; the members are "
            + ", ".join(f"`{m}`" for m in seat_list)
            + "."
        )


def _seat_weight(configured: dict[str, float], seat: str) -> float:
    """A seat's weight: given for the seat as written, else for one of its models (first listed)."""
    for key in (seat, *seats.seat_models(seat)):
        if key in configured:
            return float(configured[key])
    return 1.0
