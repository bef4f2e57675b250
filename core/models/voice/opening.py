"""What a streamed answer says before its first word, when something went wrong: a stand-in writing
for a failed chairman, the members that gave no answer, auto mode's escalation (a degraded result
says so first), and which of the result's notices are then still to be said."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from core.models.stages import AgreementCheck, CouncilResult
from core.models.voice.agreement import escalation_line
from core.models.voice.authorship import chairman_replaced
from core.models.voice.names import short_model
from core.models.voice.status import failed_answers, gave_no_answer


class Mark(str, Enum):
    """How an opening line reads: each surface picks its mark (emoji) for it."""

    WARN = "warn"  # a stand-in, a member that gave no answer
    ESCALATED = "escalated"  # auto mode's escalation


@dataclass(frozen=True)
class Opening:
    """The facts a streamed answer opens with (all empty: nothing went wrong)."""

    chairman: str | None = None  # with `stand_in`: the chairman that failed
    stand_in: str | None = None  # the member writing the answer instead
    failed: tuple[tuple[str, str], ...] = ()  # (member, why)
    escalation: str | None = None  # why the whole council deliberated

    @classmethod
    def live(
        cls, chairman: str | None, writer: str | None, failed: tuple[tuple[str, str], ...], check: AgreementCheck | None
    ) -> Opening:
        """While the council runs: a writer other than the chairman stands in for it."""
        stand_in = writer if writer and chairman and writer != chairman else None
        return cls(chairman, stand_in, failed, check.reason if check is not None and check.escalated else None)

    @classmethod
    def of_result(cls, result: CouncilResult) -> Opening:
        synthesis = result.synthesis
        stand_in = synthesis.model if synthesis is not None and synthesis.stood_in else None
        failed = tuple((a.model, a.error.short()) for a in failed_answers(result) if a.error is not None)
        check = result.agreement
        escalation = check.reason if check is not None and check.escalated else None
        return cls(result.request.config.chairman, stand_in, failed, escalation)

    def covers(self, other: Opening) -> bool:
        """Everything `other` must say, this said."""
        said = {model for model, _ in self.failed}
        return (
            (other.stand_in is None or self.stand_in is not None)
            and all(model in said for model, _ in other.failed)
            and (other.escalation is None or self.escalation is not None)
        )

    def lines(self) -> list[tuple[Mark, str]]:
        """The opening's lines, each with its mark (empty when nothing went wrong)."""
        lines = []
        if self.stand_in is not None:
            replaced = chairman_replaced(short_model(self.chairman or "chairman"), short_model(self.stand_in))
            lines.append((Mark.WARN, replaced))
        lines += [(Mark.WARN, gave_no_answer(short_model(model), why)) for model, why in self.failed]
        if self.escalation is not None:
            lines.append((Mark.ESCALATED, escalation_line(self.escalation, done=True)))
        return lines

    def unsaid(self, result: CouncilResult) -> list[str]:
        """The result's notices but those this opening said. The synthesis' note stays: the opening
        says only who writes instead, the note why the chairman failed (its cause), said once the
        answer has finished."""
        failed = [model for model, _ in self.failed]
        return [
            n
            for n in result.notices
            if not any(n.startswith(gave_no_answer(model, "")) for model in failed)
            and not (self.escalation is not None and self.escalation in n)
        ]
