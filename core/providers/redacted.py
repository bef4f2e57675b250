"""Provider errors with secrets masked: provider messages quote error bodies, and some endpoints
quote the caller's key back."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from core.providers.base import ProviderError


@contextmanager
def redacted_errors(redact: Callable[[str], str]) -> Iterator[None]:
    """A ProviderError raised inside leaves with its message redacted."""
    try:
        yield
    except ProviderError as exc:
        exc.message = redact(exc.message)
        exc.args = (exc.message,)
        raise
