"""Each completed step of a durable council, written as it completes (council_steps)."""

from __future__ import annotations

import logging

from core.models import CouncilEvent, CouncilRequest, MemberFailed, MemberFinished, ReviewFinished, RevisionFinished
from core.shared.redact import Redactor
from core.storage.jobs import JobRepository

log = logging.getLogger(__name__)


class StepJournal:
    """The `core.durable.runs.Journal` of one durable council. A step that cannot be written costs only
    its replay after a crash (it is asked again), never the council."""

    def __init__(self, jobs: JobRepository, redact: Redactor, council_id: str) -> None:
        self.jobs = jobs
        self.redact = redact
        self.council_id = council_id

    async def prepared(self, request: CouncilRequest) -> None:
        try:
            await self.jobs.save_prepared(self.redact.model(request))
        except Exception as exc:
            log.warning("council %s: could not keep what it read: %s", self.council_id, exc)

    async def record(self, event: CouncilEvent) -> None:
        try:
            if isinstance(event, MemberFinished | MemberFailed):
                await self.jobs.save_answer(self.council_id, self.redact.model(event.answer))
            elif isinstance(event, ReviewFinished):
                await self.jobs.save_review(self.council_id, self.redact.model(event.review))
            elif isinstance(event, RevisionFinished):  # a round is resumable member by member
                await self.jobs.save_revision(self.council_id, self.redact.model(event.revision))
        except Exception as exc:
            log.warning("council %s: could not keep a completed step: %s", self.council_id, exc)
