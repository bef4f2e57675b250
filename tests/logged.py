"""What a test's own code logged as an error, without the debris of earlier tests."""

from __future__ import annotations

import logging


def _closed_loop_debris(record: logging.LogRecord) -> bool:
    # A task of an earlier test's (closed) event loop collected while this test runs: asyncio logs
    # "Task exception was never retrieved … Event loop is closed" into whichever test is current.
    exc = record.exc_info[1] if record.exc_info else None
    return record.name == "asyncio" and isinstance(exc, RuntimeError) and "Event loop is closed" in str(exc)


def errors_logged(records: list[logging.LogRecord]) -> list[logging.LogRecord]:
    return [r for r in records if (r.exc_info or r.levelno >= logging.ERROR) and not _closed_loop_debris(r)]
