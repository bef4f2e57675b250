"""The asker's question and the thread's history as a council may read and store them: readable
text, secrets masked, within the configured sizes."""

from __future__ import annotations

from collections.abc import Sequence

from core.admission.limits import validate_question
from core.models import ConversationTurn
from core.models.text import clean_text
from core.settings import Settings
from core.shared.redact import Redactor


class QuestionCleaner:
    def __init__(self, settings: Settings, redact: Redactor) -> None:
        self.settings = settings
        self.redact = redact

    def question(self, question: str) -> str:
        """InputRejected when the question is empty or too long."""
        return validate_question(self.redact(clean_text(question)), self.settings.limits.max_question_chars)

    def persona(self, persona: str) -> str:
        """A seat's persona as its member reads it: readable text, secrets masked (its length is
        bounded where it was set, core/models/deliberation.py)."""
        return self.redact(clean_text(persona))

    def history(self, history: Sequence[ConversationTurn]) -> list[ConversationTurn]:
        """Each turn cleaned, then the most recent turns that fit the history budget."""
        return self._trim([self._clean_turn(turn) for turn in history])

    def _clean_turn(self, turn: ConversationTurn) -> ConversationTurn:
        author = clean_text(turn.author) if turn.author is not None else None
        return turn.model_copy(update={"content": self.redact(clean_text(turn.content)), "author": author})

    def _trim(self, history: Sequence[ConversationTurn]) -> list[ConversationTurn]:
        """Keep the most recent turns that fit the history budget (older context matters least)."""
        budget = self.settings.limits.max_history_chars
        kept: list[ConversationTurn] = []
        for turn in reversed(list(history)):
            if len(turn.content) > budget:
                break
            budget -= len(turn.content)
            kept.append(turn)
        return list(reversed(kept))
