"""The facts of a result every JSON surface carries under the same names: the web page's JSON twin
(`told`), the API's completion metadata and MCP's answer. Each surface adds what is its own."""

from __future__ import annotations

from typing import Any

from core.models.stages import CouncilResult
from core.models.voice.authorship import author_note, author_of, written_by
from core.models.voice.ballots import ballots_read, late_line
from core.models.voice.status import failed_members


def told(result: CouncilResult) -> dict[str, Any]:
    """Who wrote the answer (chairman, as_written or stand_in) and the sentences that say so, the
    members that failed, the ballots read, the reviews that came after the synthesis began, the mode."""
    synthesis = result.synthesis
    return {
        "author": author_of(synthesis).value if synthesis is not None else None,
        "author_line": written_by(synthesis) if synthesis is not None else None,
        "author_note": author_note(result),
        "failed_members": failed_members(result),
        "ballots": ballots_read(result),
        "late_reviews": late_line(result),
        "mode": result.request.config.mode,
    }
