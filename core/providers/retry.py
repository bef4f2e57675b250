"""Retries of transient provider failures: jittered exponential backoff that honours Retry-After."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from core.providers.base import ProviderError

T = TypeVar("T")


class Retry(Exception):
    """A transient failure worth another attempt (raised by a call, caught by `RetryPolicy.run`)."""

    def __init__(self, error: ProviderError):
        self.error = error


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    base_s: float = 0.5
    max_s: float = 20.0

    async def run(self, call: Callable[[], Awaitable[T]]) -> T:
        """`call` until it succeeds, raises a ProviderError, or has been retried `max_retries` times
        (then the last transient failure is raised)."""
        attempt = 0
        while True:
            try:
                return await call()
            except Retry as retry:
                if attempt >= self.max_retries:
                    raise retry.error from None
                await asyncio.sleep(self.backoff(attempt, retry.error))
                attempt += 1

    def backoff(self, attempt: int, error: ProviderError) -> float:
        if error.retry_after_s is not None:
            return min(max(error.retry_after_s, 0.0), self.max_s)
        # Full jitter: spreads retries of many councils hitting the same limit.
        return random.uniform(0, min(self.max_s, self.base_s * (2**attempt)))
