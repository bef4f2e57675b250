"""Admission of a council: the question and its history cleaned (core/admission/question_cleaning.py), the
channel's configuration, and every limit checked (input, budget and rate in core/admission/channel_limits.py,
capacity) before it may start."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence

from core.admission import measured
from core.admission.channel_limits import ChannelLimits
from core.admission.deliberation import asked_lenses, council_lenses, self_moa_seat, with_deliberation_mode
from core.admission.limits import ConcurrencyGate, Ticket
from core.admission.question_cleaning import QuestionCleaner
from core.channels.admin import allowed_models, check_choice, clean_members, require_known_models
from core.engine.weights import reviewer_weights
from core.models import (
    ChannelSettings,
    ConversationTurn,
    CouncilConfig,
    CouncilMode,
    CouncilRequest,
    ModelStats,
    Origin,
    Platform,
    new_council_id,
    seats,
)
from core.models.files import FILES_ONLY_QUESTION, ExtractedAttachment
from core.ownership import CouncilOwner
from core.providers.router import ProviderRouter
from core.settings import Settings
from core.shared.redact import Redactor
from core.storage import Storage
from core.tenants.service import OPERATORS_LINEUP, TenantLineup, TenantPlan


class Admission:
    def __init__(
        self,
        settings: Settings,
        storage: Storage,
        router: ProviderRouter,
        redact: Redactor,
        gate: ConcurrencyGate,
        owner: CouncilOwner,
        *,
        plans: Callable[[Origin], Awaitable[TenantPlan]] | None = None,
        lineups: Callable[[Origin], Awaitable[TenantLineup]] | None = None,
    ) -> None:
        """`plans` and `lineups`: a council's tenant (core/tenants) at an origin, its router and
        line-up with its key requirement and budget, or its line-up alone. Without them every
        council is the operator's (`council eval`'s configurations)."""
        self.settings = settings
        self.storage = storage
        self.router = router
        self.cleaner = QuestionCleaner(settings, redact)
        self.limits = ChannelLimits(settings, storage)
        self.gate = gate
        self.owner = owner
        self.plans = plans
        self.lineups = lineups

    async def admit(
        self,
        question: str,
        origin: Origin,
        history: Sequence[ConversationTurn],
        *,
        council_id: str | None = None,
        members: Sequence[str] | None = None,
        chairman: str | None = None,
        attachments: Sequence[ExtractedAttachment] = (),
        mode: CouncilMode | None = None,
        lenses: Mapping[str, str] | None = None,
    ) -> tuple[CouncilRequest, Ticket]:
        """The stored request and its ticket (a running slot or a place in the queue), atomically.
        `members`/`chairman`/`mode` replace the channel's for this council only; `lenses` (seat ->
        a preset's name or a persona) replace its members' lenses.

        Raises InputRejected, RateLimited, BudgetExceeded or Overloaded with a user-facing
        message; a refused question uses up none of the asker's rate limit.
        """
        if attachments and not question.strip():
            question = FILES_ONLY_QUESTION  # files shared without a word: the council reads them
        # Cleaned before anything is counted or stored: undecodable text must not cost a rate-limit hit.
        question = self.clean_question(question)
        turns = self.cleaner.history(history)
        ticket = self.gate.admit()  # Overloaded here, before anything is recorded
        try:
            plan = await self._plan(origin)
            channel = await self.storage.channels.get(origin.channel_key)
            self._check_choice(origin, channel, plan, members, chairman)
            config = await self._council_config(channel, members, chairman, mode, plan, origin, lenses)
            await self.limits.check(origin, channel, record=True)
            await self.owner.start()
            await ticket.take_shared_now()  # the cap across processes (PostgreSQL): queued if all busy
            request = CouncilRequest(
                council_id=council_id or new_council_id(),
                question=question,
                config=config,
                history=turns,
                origin=origin,
                attachments=list(attachments),
            )
            await self.storage.councils.save_started(request, self.owner.owner_id)
        except BaseException:
            ticket.release()
            raise
        return request, ticket

    async def _council_config(
        self,
        channel: ChannelSettings | None,
        members: Sequence[str] | None,
        chairman: str | None,
        mode: CouncilMode | None,
        plan: TenantPlan,
        origin: Origin | None = None,
        lenses: Mapping[str, str] | None = None,
    ) -> CouncilConfig:
        """The channel's council (else its tenant's line-up) with this request's replacements, its
        quick seats (auto mode: the two asked first), refine's rounds or Self-MoA's samples, the
        members' lenses and reviewer weights."""
        config = with_tenant_lineup(self.config_for(channel), channel, plan.lineup)
        config = await self._with_overrides(config, members, chairman, plan.router)
        if mode is not None:
            config.mode = mode
        config = await self._measured(config)
        asked = asked_lenses(lenses, config.members)
        config.lenses = council_lenses(self.settings, channel, config.members, asked, self.cleaner.persona)
        sampled = None
        if config.mode == "self-moa":
            measured_seat = config.strategy.seat if config.strategy is not None else None
            sampled = measured_seat or await self_moa_seat(self.settings, self.storage, origin, config.members)
        config = with_deliberation_mode(config, self.settings, sampled)
        if config.strategy is not None and config.strategy.seat is not None:
            config.chairman = config.strategy.seat  # as measured: the sampled model aggregates
        if config.mode == "quick":
            config.members = quick_seats(config.members, await self.storage.stats.model_stats())
        elif config.mode == "auto":
            config.first_seats = quick_seats(config.members, await self.storage.stats.model_stats())
        weights = await reviewer_weights(self.settings, self.storage, config.members)
        return config.model_copy(update={"reviewer_weights": weights})

    async def _measured(self, config: CouncilConfig) -> CouncilConfig:
        """`best` resolved into the mode the line-up's latest eval run chose, and the unsure
        threshold the result is judged by (core/admission/measured.py)."""
        lineup = await measured.lineup_eval(self.storage, config.members, config.chairman)
        update: dict[str, object] = {}
        if config.mode == measured.BEST:
            strategy = measured.choose(lineup)
            update.update(mode=strategy.mode, strategy=strategy)
        mode = str(update.get("mode", config.mode))
        update["unsure_below"] = measured.unsure_threshold(lineup, mode, self.settings.council.unsure_below)
        return config.model_copy(update=update)

    def _check_choice(
        self,
        origin: Origin,
        channel: ChannelSettings | None,
        plan: TenantPlan,
        members: Sequence[str] | None,
        chairman: str | None,
    ) -> None:
        """A question's own members and chairman must be among the models its channel allows: in
        chat always (default: the channel's members, fallbacks and chairman), elsewhere (API, MCP,
        terminal: the operator's or a key holder's choice) only where an admin set a list."""
        if not members and not chairman:
            return
        if origin.platform in (Platform.SLACK, Platform.DISCORD) or (channel and channel.allowed_models):
            config = with_tenant_lineup(self.config_for(channel), channel, plan.lineup)
            check_choice(allowed_models(config, channel), members, chairman)

    async def _plan(self, origin: Origin) -> TenantPlan:
        return await self.plans(origin) if self.plans is not None else TenantPlan(self.router)

    async def operator_config(self, mode: CouncilMode) -> CouncilConfig:
        """The configured council (no channel's overrides) in `mode`, as `admit` would build it:
        the operator's own councils (`council eval`), which pass no channel or user limit."""
        return await self._council_config(None, None, None, mode, TenantPlan(self.router))

    async def check(
        self, question: str, origin: Origin, members: Sequence[str] | None = None, chairman: str | None = None
    ) -> str:
        """The checks of `admit` without their effects (no queue place, no rate-limit hit)."""
        question = self.clean_question(question)
        self.gate.check_capacity()
        plan = await self._plan(origin)
        channel = await self.storage.channels.get(origin.channel_key)
        self._check_choice(origin, channel, plan, members, chairman)
        await self.limits.check(origin, channel, record=False)
        return question

    def clean_question(self, question: str) -> str:
        return self.cleaner.question(question)

    async def effective_config(self, origin: Origin, channel: ChannelSettings | None) -> CouncilConfig:
        """The council a question at `origin` gets before its own choices (what `/council-admin
        show`, the Home tab and the leaderboard's seats show): the channel's settings, else its
        tenant's line-up, else the operator's defaults."""
        lineup = await self.lineups(origin) if self.lineups is not None else OPERATORS_LINEUP
        config = with_tenant_lineup(self.config_for(channel), channel, lineup)
        config.lenses = council_lenses(self.settings, channel, config.members, None, self.cleaner.persona)
        return config

    def config_for(self, channel: ChannelSettings | None) -> CouncilConfig:
        s = self.settings
        members = (channel and channel.members) or s.default_members
        chairman = (channel and channel.chairman) or s.default_chairman
        return CouncilConfig(
            members=list(members),
            chairman=chairman,
            mode=(channel and channel.mode) or s.council.mode,
            exclude_self_review=s.council.exclude_self,
            member_timeout_s=s.council.timeout_s,
            quorum=s.council.quorum,
            grace_s=s.council.grace_s,
            grace_min_s=s.council.grace_min_s,
            grace_factor=s.council.grace_factor,
            max_reviewers=s.council.max_reviewers,
            max_answer_tokens=s.council.max_answer_tokens,
            ballot_format=s.council.ballot_format,
            rubric=s.council.rubric,
            unsure_mention=channel.unsure_mention if channel else None,
        )

    async def _with_overrides(
        self, config: CouncilConfig, members: Sequence[str] | None, chairman: str | None, router: ProviderRouter
    ) -> CouncilConfig:
        chosen_members = clean_members(members) if members else None
        chosen_chairman = seats.clean_seat(chairman) if chairman else None
        named = [*(chosen_members or []), *([chosen_chairman] if chosen_chairman else [])]
        if not named:
            return config
        await require_known_models(router, seats.all_models(named))
        return config.model_copy(
            update={"members": chosen_members or config.members, "chairman": chosen_chairman or config.chairman}
        )


def with_tenant_lineup(config: CouncilConfig, channel: ChannelSettings | None, lineup: TenantLineup) -> CouncilConfig:
    """A tenant's own line-up replaces the operator's defaults, not what a channel chose."""
    update: dict[str, object] = {}
    if lineup.members and not (channel and channel.members):
        update["members"] = list(lineup.members)
    if not (channel and channel.chairman) and (lineup.chairman or lineup.members):
        update["chairman"] = lineup.chairman or (lineup.members or [""])[0]
    return config.model_copy(update=update) if update else config


QUICK_SEATS = 2
RELIABLE_FAILURE_RATE = 0.2  # a seat whose primary failed more often than this is not picked first


def quick_seats(members: Sequence[str], stats: dict[str, ModelStats]) -> list[str]:
    """Quick mode's two seats: the fastest reliable ones by their primary's stored statistics
    (mean latency, failure rate), then the others in configured order."""

    def reliable_latency(seat: str) -> float | None:
        entry = stats.get(seats.primary(seat))
        if entry is None or not entry.councils or entry.average_latency_s is None:
            return None
        if entry.failures / entry.councils > RELIABLE_FAILURE_RATE:
            return None
        return entry.average_latency_s

    measured = sorted(
        (latency, index, seat) for index, seat in enumerate(members) if (latency := reliable_latency(seat)) is not None
    )
    chosen = [seat for _, _, seat in measured[:QUICK_SEATS]]
    chosen += [seat for seat in members if seat not in chosen][: QUICK_SEATS - len(chosen)]
    return chosen
