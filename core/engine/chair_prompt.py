"""What the synthesizer of stage 3 is asked: the full chairman prompt, quick mode's comparison of
two answers, or the brief prompt for a small context window; and the members best first (whom
a brief prompt quotes, and who stands in for a failed chairman)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.engine import prompts
from core.engine.chair_notes import SELF_MOA_NOTE, deliberation_note
from core.engine.state import CouncilState
from core.models import ChatMessage
from core.models.voice import LOW_CONSENSUS
from core.providers.base import ProviderError

if TYPE_CHECKING:
    from core.providers.router import ProviderRouter

# A synthesizer whose context window is this small (tokens; local models) gets the brief prompt:
# the best answers only. Tiny models lose the thread in the full one and echo its markers.
BRIEF_PROMPT_CONTEXT = 8192
BRIEF_PROMPT_ANSWERS = 2


def ranked_members(state: CouncilState) -> list[str]:
    """Answered members, best first: by the aggregate if any ballot counted, else member order."""
    answered = list(state.label_to_model.values())
    aggregate = state.aggregate
    if aggregate and any(e.average_rank is not None for e in aggregate.entries):
        return [e.model for e in aggregate.entries if e.model in answered]
    return answered


class ChairPrompt:
    """The prompts of one council's synthesizers."""

    def __init__(self, state: CouncilState, router: ProviderRouter) -> None:
        self.state = state
        self.router = router

    @property
    def quick(self) -> bool:
        """Quick mode's comparison of two answers (also auto mode's, when they agreed)."""
        mode = self.state.config.mode
        return mode == "quick" or (mode == "auto" and not self.state.escalated)

    def messages(self, model: str, *, fallback: bool) -> list[ChatMessage]:
        """The synthesizer's prompt, told where the answer is read (prompts.shown_in)."""
        return prompts.with_shown_in(self._messages(model, fallback=fallback), self.state.request.origin)

    def _messages(self, model: str, *, fallback: bool) -> list[ChatMessage]:
        state = self.state
        texts = state.labelled_texts()
        if self.small_context(model):
            best = [state.answer_of(m).label for m in ranked_members(state)[:BRIEF_PROMPT_ANSWERS]]
            return prompts.brief_chairman_messages(
                state.request.question,
                {label: texts[label] for label in best if label},
                history=state.request.history,
                member_ids=state.all_ids(),
                fallback=fallback,
            )
        if self.quick and not fallback and len(texts) == 2:
            return prompts.quick_chairman_messages(
                state.request.question,
                texts,
                state.chair_fence,
                history=state.request.history,
                member_ids=state.all_ids(),
            )
        return prompts.chairman_messages(
            state.request.question,
            texts,
            [r.text for r in state.reviews.values() if r.text],
            state.aggregate.entries if state.aggregate else None,
            state.chair_fence,
            history=state.request.history,
            member_ids=state.all_ids(),
            fallback=fallback,
            disagreements=disagreements(state),
            where_they_differ=state.request.answer_format is None,
            deliberation=deliberation_note(state),
            ranking_note=SELF_MOA_NOTE if state.config.mode == "self-moa" else None,
        )

    def small_context(self, model: str) -> bool:
        context_window = getattr(self.router, "context_window", None)  # fakes may not say
        try:
            window = context_window(model) if context_window is not None else None
        except ProviderError:
            return False  # the call itself will report the cause
        return window is not None and window <= BRIEF_PROMPT_CONTEXT


# How many of the most disputed (answer, criterion) pairs a low-consensus prompt names.
DISPUTED_SHOWN = 3


def disagreements(state: CouncilState) -> str | None:
    """When the reviewers' rubric scores agree little (consensus below LOW_CONSENSUS), the lines
    that ask the chairman to address it, naming the answers and criteria scored furthest apart."""
    aggregate = state.aggregate
    if aggregate is None or aggregate.consensus is None or aggregate.consensus >= LOW_CONSENSUS:
        return None
    cells: dict[tuple[str, str], list[float]] = {}
    for review in state.reviews.values():
        for label, values in review.scores.items():
            for criterion, value in values.items():
                cells.setdefault((label, criterion), []).append(value)
    spread = sorted(
        ((max(v) - min(v), label, criterion, v) for (label, criterion), v in cells.items() if len(v) >= 2),
        key=lambda cell: (-cell[0], cell[1], cell[2]),
    )
    named = "; ".join(
        f"Response {label}'s {criterion} (scored {min(v):g} to {max(v):g})"
        for _, label, criterion, v in spread[:DISPUTED_SHOWN]
    )
    return (
        f"The reviewers disagreed (consensus {aggregate.consensus:.0f}/100 on their scores), most on: "
        f"{named}. Address those disagreements explicitly: say where the answers conflict and which "
        "view the evidence supports, rather than averaging them away."
    )
