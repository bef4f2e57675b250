"""Keeps configured secrets out of every text the bot shows, logs or stores.

Endpoints sometimes quote the caller's key back in an error body (some proxies do), a model can be
made to repeat the request's key in its answer, and exception texts can carry anything. So model
text is redacted once, where it enters the council (the provider router: every completion, every
streamed piece, every error), before any event, store or surface sees it; and log handlers and
error lines are redacted where texts leave the process.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, ClassVar, TypeVar

from pydantic import BaseModel

if TYPE_CHECKING:
    from core.settings import Settings

MASK = "[redacted]"
# Shorter values are not secrets anyone could mistake for real ones, and masking them would
# mangle ordinary words.
_MIN_SECRET_CHARS = 6

M = TypeVar("M", bound=BaseModel)


def _forms(secret: str) -> set[str]:
    if len(secret) < _MIN_SECRET_CHARS:
        return set()
    return {secret, json.dumps(secret)[1:-1]}  # as itself and as it appears inside a JSON string


class Redactor:
    """Replaces every configured secret (each SecretStr field of Settings) with a mask, and every
    secret the process learned since (`Redactor.learn`: tenants' provider keys, installations'
    tokens), in every instance: the log filter knows a key as soon as it is saved or read."""

    _learned: ClassVar[set[str]] = set()

    def __init__(self, secrets: list[str]):
        forms: set[str] = set()
        for secret in secrets:
            forms |= _forms(secret)
        # Longest first, so a secret that contains another is masked whole.
        self._secrets = sorted(forms, key=len, reverse=True)
        self._seen = 0

    @classmethod
    def learn(cls, secret: str) -> None:
        """A secret that is not a setting (a tenant's key, a workspace's token): masked from now on."""
        cls._learned |= _forms(secret)

    def _current(self) -> list[str]:
        if len(self._learned) != self._seen:
            self._seen = len(self._learned)
            self._secrets = sorted(set(self._secrets) | self._learned, key=len, reverse=True)
        return self._secrets

    @classmethod
    def from_settings(cls, settings: Settings) -> Redactor:
        return cls(settings.secret_values())

    def __bool__(self) -> bool:
        return bool(self._current())

    def __call__(self, text: str) -> str:
        for secret in self._current():
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    def model(self, value: M) -> M:
        """A copy of a pydantic model with every secret masked in every field (or `value` itself)."""
        if not self._current():
            return value
        dumped = value.model_dump_json()
        cleaned = self(dumped)
        return value if cleaned == dumped else type(value).model_validate_json(cleaned)


class StreamRedactor:
    """Redacts a text that arrives in pieces (a streamed answer): a secret split across pieces is
    still masked, because the tail that could be the start of a secret is held back until the next
    piece shows whether it is one (or until `flush`, at the end of the stream)."""

    def __init__(self, redactor: Redactor):
        self.redactor = redactor
        self._pending = ""

    def feed(self, piece: str) -> str:
        """The text that can be shown now (possibly empty)."""
        secrets = self.redactor._current()
        if not secrets:
            return piece
        text = self.redactor(self._pending + piece)
        keep = _held_back(text, secrets)
        self._pending = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def flush(self) -> str:
        """What was held back, at the end of the stream."""
        text, self._pending = self.redactor(self._pending), ""
        return text


def _held_back(text: str, secrets: list[str]) -> int:
    """The length of the longest end of `text` that starts some secret (0: none)."""
    longest = 0
    for secret in secrets:
        for size in range(min(len(secret) - 1, len(text)), longest, -1):
            if text.endswith(secret[:size]):
                longest = size
                break
    return longest


class RedactingFilter(logging.Filter):
    """A handler filter: the formatted message and any traceback text are redacted."""

    def __init__(self, redactor: Redactor):
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.redactor:
            return True
        message = record.getMessage()
        record.msg, record.args = self.redactor(message), None
        if record.exc_info and not record.exc_text:
            # The formatter reuses exc_text when it is set, so the traceback is printed redacted.
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redactor(record.stack_info)
        return True
