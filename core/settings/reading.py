"""What a council reads beside the question: attached files (core/reading/attachments) and web search."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator

from core.settings.group import CsvList, SettingsGroup, split_csv


class AttachmentSettings(SettingsGroup):
    max_file_mb: float = Field(
        20.0, alias="COUNCIL_ATTACHMENT_MAX_FILE_MB", gt=0, description="Size of one file, in MB."
    )
    max_total_mb: float = Field(
        50.0, alias="COUNCIL_ATTACHMENT_MAX_TOTAL_MB", gt=0, description="Size of all files of one question, in MB."
    )
    max_files: int = Field(5, alias="COUNCIL_ATTACHMENT_MAX_FILES", ge=0, description="Files read per question.")
    max_chars: int = Field(
        100_000,
        alias="COUNCIL_ATTACHMENT_MAX_CHARS",
        ge=1,
        description="Extracted text of all files of one question; beyond it the text is cut with a visible note.",
    )
    max_pages: int = Field(
        200, alias="COUNCIL_ATTACHMENT_MAX_PAGES", ge=1, description="PDF pages read per file (the rest is left out)."
    )
    fetch_timeout_s: float = Field(
        30.0,
        alias="COUNCIL_ATTACHMENT_FETCH_TIMEOUT_S",
        gt=0,
        description="Deadline of one download from the platform's file servers, seconds.",
    )
    # Hostile files: every file is read in a worker process killed at this deadline, whose address space
    # is capped at this size (core/reading/attachments/readers.py); at most this many read at once per process.
    read_s: float = Field(
        10.0,
        alias="COUNCIL_ATTACHMENT_READ_S",
        gt=0,
        description="Each file is read in a separate reader process, killed at this deadline (seconds).",
    )
    read_mb: int = Field(
        256,
        alias="COUNCIL_ATTACHMENT_READ_MB",
        ge=128,
        description="The memory (address space, MB) of one reader process; the reader itself takes ~90 MB of it.",
    )
    readers: int = Field(
        2, alias="COUNCIL_ATTACHMENT_READERS", ge=1, description="Files read at once per process; the others wait."
    )
    vision_models: CsvList = Field(
        default_factory=list,
        alias="COUNCIL_VISION_MODELS",
        description="Model ids that take images (comma-separated); when empty the provider's model list decides.",
    )

    _split = field_validator("vision_models", mode="before")(split_csv)


class SearchSettings(SettingsGroup):
    backend: Literal["off", "searxng", "brave", "tavily"] = Field(
        "off", alias="COUNCIL_SEARCH", description="The web search backend: off, searxng, brave or tavily."
    )
    searxng_url: str | None = Field(
        None,
        alias="SEARXNG_URL",
        description="Base URL of a SearXNG instance whose settings.yml allows the json format.",
    )
    brave_api_key: SecretStr | None = Field(None, alias="BRAVE_API_KEY", description="Brave Search API key.")
    tavily_api_key: SecretStr | None = Field(None, alias="TAVILY_API_KEY", description="Tavily API key (tvly-...).")
    results: int = Field(
        5, alias="COUNCIL_SEARCH_RESULTS", ge=1, le=20, description="Search results given to the council."
    )
    timeout_s: float = Field(
        10.0, alias="COUNCIL_SEARCH_TIMEOUT_S", gt=0, description="Deadline of one search, seconds."
    )
    default: bool = Field(
        False,
        alias="COUNCIL_SEARCH_DEFAULT",
        description="Search before every council in channels without a `/council-admin search on|off` setting.",
    )

    @field_validator("backend", mode="before")
    @classmethod
    def _backend_name(cls, value: Any) -> Any:
        if isinstance(value, str):
            return value.strip().lower() or "off"
        return value
