"""Thread messages as conversation context, the same way on every platform."""

from __future__ import annotations

from core.models import ConversationTurn


def append_turn(turns: list[ConversationTurn], turn: ConversationTurn | None) -> None:
    """Add one thread message's turn (None: the message is not context). Council messages that
    follow each other, such as an answer split over several messages, are one assistant turn."""
    if turn is None:
        return
    if turns and turn.role == "assistant" and turns[-1].role == "assistant":
        turns[-1] = turns[-1].model_copy(update={"content": turns[-1].content + "\n\n" + turn.content})
    else:
        turns.append(turn)
