"""What a council reads besides the question: the asker's files and a web search.

`CouncilReading.read_files` downloads (from the platform's own file hosts only) and reads one
question's files; `prepare(request)` runs before stage 1: which models are shown the images, and
the web search. Failures here are notices, never a failed council.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import SecretStr

from core.models import ChannelSettings, CouncilRequest, Platform, seats
from core.models.files import AttachmentBatch, IncomingFile
from core.models.search import SearchResult
from core.providers.router import ProviderRouter
from core.settings import Settings
from core.shared.redact import Redactor

if TYPE_CHECKING:
    from core.reading.attachments import AttachmentFetcher, AttachmentLimits, AttachmentReaders
    from core.reading.search import SearchBackend

# The readers (attachments), the search backends and their HTTP stack are imported when a question
# first has files or asks for a search: most questions have neither, and the terminal's
# `council ask` would otherwise load them all before its first line.


log = logging.getLogger(__name__)
FACT_CHECK_RESULTS = 3  # results of the chairman's one search


class CouncilReading:
    def __init__(self, settings: Settings, router: ProviderRouter, redact: Redactor) -> None:
        self.settings = settings
        self.router = router
        self.redact = redact
        self._search_backend: SearchBackend | None = None
        self._readers: AttachmentReaders | None = None

    @property
    def readers(self) -> AttachmentReaders:
        """This process's reader processes: at most COUNCIL_ATTACHMENT_READERS files at once."""
        if self._readers is None:
            from core.reading.attachments import AttachmentReaders, ReaderLimits

            self._readers = AttachmentReaders(ReaderLimits.from_settings(self.settings))
        return self._readers

    async def aclose(self) -> None:
        if self._readers is not None:
            await self._readers.aclose()
        if self._search_backend is not None:
            await self._search_backend.aclose()

    def wants_search(self, asked: bool | None, channel: ChannelSettings | None) -> bool:
        """Per question (True/False), else the channel's `/council-admin search`, else the default."""
        choices = (asked, channel.search if channel else None, self.settings.search.default)
        return next((choice for choice in choices if choice is not None), False)

    async def read_files(
        self, files: Sequence[IncomingFile], platform: Platform, token: str | None = None
    ) -> AttachmentBatch:
        """Never raises for a bad file: refusals and notices are in the batch, for the asker only.
        `token`: the workspace's bot token where it is not SLACK_BOT_TOKEN (OAuth distribution)."""
        if not files:
            return AttachmentBatch()
        from core.reading.attachments import AttachmentLimits, prepare_attachments

        limits = AttachmentLimits.from_settings(self.settings)
        fetcher = self._file_fetcher(platform, limits, SecretStr(token) if token else None)
        try:
            return await prepare_attachments(files, limits=limits, fetcher=fetcher, readers=self.readers)
        finally:
            if fetcher is not None:
                await fetcher.aclose()

    def _file_fetcher(
        self, platform: Platform, limits: AttachmentLimits, token: SecretStr | None = None
    ) -> AttachmentFetcher | None:
        from core.reading.attachments import DISCORD_FILE_HOSTS, SLACK_FILE_HOSTS, AttachmentFetcher, allowed_file_hosts

        s = self.settings
        if platform is Platform.SLACK:
            hosts = allowed_file_hosts(SLACK_FILE_HOSTS, s.slack.api_url)
            return AttachmentFetcher(
                allowed_hosts=hosts, bearer_token=token or s.slack.bot_token, timeout_s=limits.fetch_timeout_s
            )
        if platform is Platform.DISCORD:
            hosts = allowed_file_hosts(DISCORD_FILE_HOSTS, s.discord.api_url)
            return AttachmentFetcher(allowed_hosts=hosts, timeout_s=limits.fetch_timeout_s)
        return None  # the CLI and the API pass the bytes themselves

    async def prepare(
        self, request: CouncilRequest, *, search: bool, router: ProviderRouter | None = None
    ) -> list[str]:
        """Before stage 1: which models see the images, and the web search (with `router`: the
        council's tenant's models). Returns the notices."""
        router = router or self.router
        notices: list[str] = []
        if any(a.kind == "image" for a in request.attachments):
            from core.reading.material import image_notice

            readers = seats.all_models([*request.config.members, request.config.chairman])
            request.image_members = sorted(await router.image_models(readers))
            notice = image_notice(request)
            if notice:
                notices.append(notice)
        if not search:
            return notices
        backend = self._search()
        if isinstance(backend, str):
            return [*notices, backend]
        from core.reading.research import find_sources

        outcome = await find_sources(backend, request, router, max_results=self.settings.search.results)
        request.sources = outcome.sources
        return [*notices, *(self.redact(notice) for notice in outcome.notices)]

    async def fact_search(self, query: str) -> list[SearchResult]:
        """One search for the chairman's check of a disputed fact (core/engine/fact_check.py): the
        configured backend's first results; none when there is no backend or it failed."""
        backend = self._search()
        if isinstance(backend, str):
            return []
        try:
            return list(await backend.search(query, max_results=FACT_CHECK_RESULTS))
        except Exception as exc:  # a failed check costs the check, never the council
            log.info("the chairman's fact check found nothing: %s", self.redact(str(exc)))
            return []

    def _search(self) -> SearchBackend | str:
        """The configured backend (built once), or the notice saying why there is none."""
        if self._search_backend is None:
            from core.reading.search import SearchConfigError, search_backend_from_settings

            try:
                self._search_backend = search_backend_from_settings(self.settings)
            except SearchConfigError as exc:
                return f"Web search is not available: {exc.message}."
            if self._search_backend is None:
                return "Web search was asked for, but no search backend is configured (COUNCIL_SEARCH=off)."
        return self._search_backend
