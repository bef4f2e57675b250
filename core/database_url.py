"""DATABASE_URL forms: `sqlite:///path` (or a bare path, `:memory:`), `postgresql://…` and
`postgres://…`; and the URL as it may be shown (never with its password)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

SQLITE = "sqlite"
POSTGRESQL = "postgresql"


@dataclass(frozen=True)
class DatabaseTarget:
    """Where DATABASE_URL points: a backend and what to connect to (`display` has no password)."""

    dialect: str
    location: str  # SQLite: a file path or ":memory:"; PostgreSQL: the conninfo URL
    display: str


def parse_database_url(url: str) -> DatabaseTarget:
    """`sqlite:///path` (or a bare path, `:memory:`), `postgresql://…` or `postgres://…`."""
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme in ("postgresql", "postgres"):
        parts = urlsplit(url)
        if not parts.hostname and "host=" not in parts.query:
            raise ValueError("DATABASE_URL for PostgreSQL needs a host: postgresql://user:password@host:5432/db")
        conninfo = "postgresql://" + url.split("://", 1)[1]
        return DatabaseTarget(POSTGRESQL, conninfo, redact_url(conninfo))
    if scheme in ("sqlite", "sqlite+aiosqlite"):
        if ":///" not in url:
            raise ValueError("DATABASE_URL for SQLite is sqlite:///relative/path.db or sqlite:////absolute/path.db")
        path = url.split(":///", 1)[1] or ":memory:"
        return DatabaseTarget(SQLITE, path, path)
    if scheme:
        raise ValueError(f"DATABASE_URL must be sqlite:///path, postgresql://… or postgres://… (got a {scheme!r} URL)")
    return DatabaseTarget(SQLITE, url, url)  # a plain path


def redact_url(url: str) -> str:
    """The URL without its password (for doctor, logs and errors)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{unquote(parts.username or '')}:***@{parts.hostname or ''}"
    if parts.port:
        netloc += f":{parts.port}"
    return parts._replace(netloc=netloc).geturl()
