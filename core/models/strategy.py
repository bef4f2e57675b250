"""The strategy a `best` council ran: the mode the line-up's eval chose, and the one line that says
which and why (core/admission/measured.py chooses it; core/models/voice/measured.py words it)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strategy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    mode: str  # the mode that ran
    line: str  # which strategy ran and why, naming the eval run
    run: str | None = None  # the eval run it was chosen on; None: no run of this line-up
    seat: str | None = None  # self-moa: the model the eval sampled, and aggregated with
