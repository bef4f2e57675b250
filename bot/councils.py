"""What both chat adapters do with a council apart from drawing it: the rules of a long answer,
the words of a Stop / Synthesize click and of the scopes people type (thread history: bot/history.py).
Platform renderers and wiring (bot/slack, bot/discord) use these, so the two
platforms cannot drift apart. Who may see or do what is not here: that is the service's."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from bot.long_answer import is_long_text
from bot.render_text import result_header
from core.models import CouncilResult

if TYPE_CHECKING:
    from core.service import HistoryScope

# Said in its thread when a council is resumed by another process (each platform adds its icon).
RESUMED_TEXT = "The process running this council stopped; another one resumes it here from its last completed stage."
# Closes the live display a stopped process left open, once another one has resumed its council.
HANDED_OVER_TEXT = "Stopped here when its process stopped; the council goes on below."

# The scope words of /council history and leaderboard (Slack says workspace, Discord server).
HISTORY_SCOPES: dict[str, HistoryScope] = {
    "channel": "channel",
    "workspace": "workspace",
    "server": "workspace",
    "mine": "user",
    "all": "all",
}


class AnswerFile(NamedTuple):
    filename: str
    title: str
    content: str


def is_long(result: CouncilResult) -> bool:
    """The answer is cut where it is shown and attached whole (bot/long_answer.py)."""
    return result.synthesis is not None and is_long_text(result.synthesis.text)


def answer_file(result: CouncilResult) -> AnswerFile:
    """The Markdown file attached under a long answer: the question, any notice, the whole answer."""
    synthesis = result.synthesis
    body = synthesis.text if synthesis is not None else ""
    header = result_header(result)
    content = f"# {result.request.question}\n\n" + (f"{header}\n\n" if header else "") + body + "\n"
    return AnswerFile(f"council-{result.council_id}.md", "Council answer (full text)", content)


def control_reply(stopped: bool, *, synthesize: bool) -> str:
    """What the person who clicked Stop or Synthesize now is told."""
    if not stopped:
        return "This council has already finished."
    return "Synthesizing with the answers so far…" if synthesize else "Stopping the council…"
