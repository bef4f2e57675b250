"""A thread's earlier messages as conversation context, the same on every platform.

Which of our messages belongs to which council, and as what, is read from the message map
(`CouncilService.messages`, filled as we post: bot/following.py and the adapters), not from what
the messages show. The stored council is preferred over the shown text, which may be cut; the
shown text stands in while the council is not stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import CouncilError
from core.models import ConversationTurn, CouncilResult, MessageRef, Platform

if TYPE_CHECKING:
    from core.service import CouncilService


@dataclass(frozen=True)
class ThreadMessage:
    """One earlier message of a thread as its adapter read it. The adapter leaves out what is
    never context (other bots, joins and other system messages) and cleans `text` (mentions of
    us, platform escapes, our zero-width spaces)."""

    message_id: str
    ours: bool  # posted by this bot
    author: str | None  # who wrote it (people's messages)
    text: str  # as shown


async def conversation(
    service: CouncilService, platform: Platform | str, channel_id: str, messages: Sequence[ThreadMessage]
) -> list[ConversationTurn]:
    """`messages` (oldest first, all in `channel_id`) as conversation turns: people as the user,
    our answers as the assistant, a council's question as the user; one map lookup for all."""
    ours = [m.message_id for m in messages if m.ours]
    refs = await service.messages.lookup(platform, channel_id, ours) if ours else {}
    councils = ThreadCouncils(service)
    turns: list[ConversationTurn] = []
    seen: set[str] = set()
    for message in messages:
        append_turn(turns, await turn_of(councils, message, refs.get(message.message_id), seen))
    return turns


class ThreadCouncils:
    """The councils a thread's messages belong to, each stored one read once (a council's question
    and its answer are two messages of the same council)."""

    def __init__(self, service: CouncilService) -> None:
        self.service = service
        self._stored: dict[str, CouncilResult | None] = {}

    async def stored(self, council_id: str) -> CouncilResult | None:
        """The stored council (None: still running, or gone)."""
        if council_id not in self._stored:
            self._stored[council_id] = await stored_result(self.service, council_id)
        return self._stored[council_id]


async def turn_of(
    councils: ThreadCouncils, message: ThreadMessage, ref: MessageRef | None, seen: set[str]
) -> ConversationTurn | None:
    """One message's turn (None: not context); `seen` holds the councils whose answer is in."""
    if not message.ours:
        return ConversationTurn(role="user", content=message.text, author=message.author) if message.text else None
    if ref is None:
        return None  # help, notices, uploads: ours but no council's
    if ref.role == "question":
        return await question_turn(councils, ref.council_id, message.text or None)
    if ref.role == "answer":
        return await answer_turn(councils, ref.council_id, seen, message.text)
    return None  # progress: the status message says nothing the answer does not


def append_turn(turns: list[ConversationTurn], turn: ConversationTurn | None) -> None:
    """Add one thread message's turn (None: the message is not context). Council messages that
    follow each other, such as an answer split over several messages, are one assistant turn."""
    if turn is None:
        return
    if turns and turn.role == "assistant" and turns[-1].role == "assistant":
        turns[-1] = turns[-1].model_copy(update={"content": turns[-1].content + "\n\n" + turn.content})
    else:
        turns.append(turn)


async def stored_result(service: CouncilService, council_id: str) -> CouncilResult | None:
    """The stored council a message of ours belongs to (None: still running, or gone)."""
    try:
        return await service.queries.get_result(council_id)
    except CouncilError:
        return None


async def answer_turn(
    councils: ThreadCouncils, council_id: str, seen: set[str], rendered: str
) -> ConversationTurn | None:
    """Our answer to a council as the assistant's turn, once per council (an answer split over
    several messages is one turn). The stored answer is preferred over the `rendered` text,
    which may be cut; the rendered one stands in while the council is not stored."""
    if council_id in seen:
        return None
    seen.add(council_id)
    stored = await councils.stored(council_id)
    text = stored.synthesis.text if stored is not None and stored.synthesis is not None else rendered
    return ConversationTurn(role="assistant", content=text, author="council") if text.strip() else None


async def question_turn(councils: ThreadCouncils, council_id: str, rendered: str | None) -> ConversationTurn | None:
    """The question a message of ours shows, as the user's turn (stored first, then the running
    council's, then the `rendered` text)."""
    stored = await councils.stored(council_id)
    run = councils.service.runs.get(council_id) if stored is None else None
    asked = stored.request.question if stored is not None else run.request.question if run is not None else rendered
    return ConversationTurn(role="user", content=asked) if asked else None
