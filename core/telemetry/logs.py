"""Log lines as text or, with LOG_FORMAT=json, one JSON object per line: time, level, logger,
message, and the council's id, platform, channel and stage where the line was written inside a
council (core/telemetry/context.py). The redaction filter runs before either formatter."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Literal

from core.shared.redact import RedactingFilter, Redactor
from core.telemetry import context

LogFormat = Literal["text", "json"]
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(context.current())
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = record.stack_info
        return json.dumps(line, ensure_ascii=False, default=str)


def formatter(fmt: LogFormat) -> logging.Formatter:
    return JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT)


class _State:
    fmt: LogFormat = "text"


def set_format(fmt: LogFormat) -> None:
    _State.fmt = fmt


def json_lines() -> bool:
    """Whether this process writes JSON lines (then its last error line is one too)."""
    return _State.fmt == "json"


_CHATTY_LIBRARIES = ("httpx", "httpcore")


def configure_logging(level: str | int, redactor: Redactor, fmt: LogFormat = "text") -> None:
    """Root logging on stderr at `level`, as text or JSON lines (core/telemetry/logs.py), every
    line passed through the redactor first."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    set_format(fmt)
    handler = logging.StreamHandler()
    handler.setFormatter(formatter(fmt))
    handler.addFilter(RedactingFilter(redactor))
    root.addHandler(handler)
    root.setLevel(level)
    # httpx logs every request at INFO: that is debugging detail, not the bot's own news.
    chatty = logging.DEBUG if root.getEffectiveLevel() <= logging.DEBUG else logging.WARNING
    for name in _CHATTY_LIBRARIES:
        logging.getLogger(name).setLevel(chatty)
