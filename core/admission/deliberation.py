"""What admission decides for the modes that deliberate differently: refine's rounds, Self-MoA's seat and
samples, and each seat's lens (COUNCIL_SEATS_FILE, then the channel's admins, then the question's own)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence

from core.errors import InputRejected
from core.models import MIN_BALLOTS, ChannelSettings, CouncilConfig, Lens, Origin, seats
from core.models.deliberation import lens_of
from core.settings import Settings
from core.storage import Storage


def with_deliberation_mode(config: CouncilConfig, settings: Settings, seat: str | None) -> CouncilConfig:
    """Refine: COUNCIL_ROUNDS rounds (1 unless set). Self-MoA: `seat` alone, asked k times, k being
    the standard council's calls less one (n answers + n reviews + 1 synthesis, less the aggregation)
    unless COUNCIL_SELF_MOA_SAMPLES says."""
    council = settings.council
    if config.mode == "refine":
        return config.model_copy(update={"rounds": council.rounds or 1})
    if config.mode == "self-moa" and seat is not None:
        samples = council.self_moa_samples or max(1, 2 * len(config.members))
        return config.model_copy(
            update={"members": [seat], "samples": samples, "sample_temperature": council.self_moa_temperature}
        )
    return config


async def self_moa_seat(settings: Settings, storage: Storage, origin: Origin | None, members: Sequence[str]) -> str:
    """COUNCIL_SELF_MOA_MODEL, else the channel's leaderboard leader among the members where at least
    MIN_BALLOTS ballots ranked it, else the first member."""
    if settings.council.self_moa_model:
        return seats.clean_seat(settings.council.self_moa_model)
    leader = await _leader(storage, origin, members)
    return leader or members[0]


async def _leader(storage: Storage, origin: Origin | None, members: Sequence[str]) -> str | None:
    from core.ranking import leaderboard_counted  # the Rust module: for the first Self-MoA council, not at start-up

    by_primary = {seats.primary(seat): seat for seat in members}
    place = {}
    if origin is not None and origin.channel_id is not None:
        place = {
            "platform": origin.platform.value,
            "workspace_id": origin.workspace_id,
            "channel_id": origin.channel_id,
        }
    counted = await storage.stats.ballot_counts(**place)
    orders, counts = [], []
    ranked: dict[str, int] = {}
    for order, n in zip(counted.orders, counted.counts, strict=False):
        kept = [model for model in order if model in by_primary]
        if len(kept) >= 2:
            orders.append(kept)
            counts.append(n)
            for model in kept:
                ranked[model] = ranked.get(model, 0) + n
    if not orders:
        return None
    ratings = await asyncio.to_thread(leaderboard_counted, orders, counts, rounds=1, seed=0)
    for rating in ratings:  # best first
        if ranked.get(rating.model, 0) >= MIN_BALLOTS:
            return by_primary[rating.model]
    return None


def council_lenses(
    settings: Settings,
    channel: ChannelSettings | None,
    members: Sequence[str],
    asked: Mapping[str, Lens] | None,
    clean: Callable[[str], str],
) -> dict[str, Lens]:
    """Each member's lens: the seats file's, replaced by the channel's, replaced by the question's; each
    persona cleaned like a question (`clean`: readable text, secrets masked)."""
    lenses: dict[str, Lens] = {spec.seat: spec.lens for spec in settings.council.seats}
    lenses.update((channel.lenses or {}) if channel is not None else {})
    lenses.update(asked or {})
    wanted = set(members)
    return {
        seat: lens.model_copy(update={"persona": clean(lens.persona)}) if lens.persona else lens
        for seat, lens in lenses.items()
        if seat in wanted and not lens.empty
    }


def asked_lenses(named: Mapping[str, str] | None, members: Sequence[str]) -> dict[str, Lens] | None:
    """A question's own lenses (the API's `metadata.lenses`: seat -> preset or persona), or
    InputRejected naming what is wrong."""
    if not named:
        return None
    lenses = {}
    for seat, persona in named.items():
        cleaned = seats.clean_seat(str(seat))
        if cleaned not in members:
            raise InputRejected(f"`{cleaned or seat}` is not a member of this council: {', '.join(members)}.")
        try:
            lenses[cleaned] = lens_of(str(persona))
        except ValueError as exc:
            raise InputRejected(str(exc)) from None
    return lenses
