"""DATABASE_URL forms: `sqlite:///path` (or a bare path, `:memory:`), `postgresql://…` and
`postgres://…`; and the URL as it may be shown (never with its password)."""

from __future__ import annotations

import re
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
    """`sqlite:///path` (or a bare path, `:memory:`), `postgresql://…` or `postgres://…`. Anything
    that is neither, or a URL missing a part (`://`, a valid port, the database name), is a
    ValueError naming DATABASE_URL and what is wrong: a typo must not become a SQLite file."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        _refuse_lookalike(url)
        return DatabaseTarget(SQLITE, url, url)  # a plain path
    scheme = scheme.lower()
    if scheme in ("postgresql", "postgres"):
        conninfo = "postgresql://" + rest
        _check_postgresql(conninfo)
        return DatabaseTarget(POSTGRESQL, conninfo, redact_url(conninfo))
    if scheme in ("sqlite", "sqlite+aiosqlite"):
        if not rest.startswith("/"):
            raise ValueError(
                f"DATABASE_URL {url!r} has two slashes after sqlite:, it needs three: "
                "sqlite:///relative/path.db or sqlite:////absolute/path.db"
            )
        path = rest[1:] or ":memory:"
        return DatabaseTarget(SQLITE, path, path)
    raise ValueError(
        f"DATABASE_URL must be sqlite:///path, postgresql://… or postgres://… (got a {_shown(scheme)!r} URL)"
    )


_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+):")
_KNOWN = ("postgresql", "postgres", "sqlite", "sqlite+aiosqlite")


def _refuse_lookalike(url: str) -> None:
    """A bare path is a SQLite file, unless it is a URL with a typo: `postgres//host/db` (the colon
    missing), `sqlite:/file.db` (slashes missing), `mysql:...`."""
    scheme = _SCHEME.match(url)
    if scheme is not None:
        name = scheme.group(1).lower()
        example = "sqlite:///relative/path.db" if name.startswith("sqlite") else "postgresql://user@host:5432/db"
        if name in _KNOWN:
            raise ValueError(f"DATABASE_URL {_shown(url)!r} lacks the '//' after '{name}:': write it as {example}")
        raise ValueError(f"DATABASE_URL must be sqlite:///path, postgresql://… or postgres://… (got {_shown(url)!r})")
    first = re.split(r"[/\\]", url, maxsplit=1)[0].lower()
    if first in _KNOWN and ("/" in url or "\\" in url):
        raise ValueError(
            f"DATABASE_URL {_shown(url)!r} lacks the ':' after '{first}': write it as postgresql://user@host:5432/db"
        )


def _check_postgresql(conninfo: str) -> None:
    parts = urlsplit(conninfo)
    query = parts.query
    if not parts.hostname and "host=" not in query:
        raise ValueError("DATABASE_URL for PostgreSQL needs a host: postgresql://user:password@host:5432/db")
    try:
        parts.port  # noqa: B018 - urlsplit checks the port only when asked
    except ValueError:
        port = parts.netloc.rpartition(":")[2]
        raise ValueError(f"DATABASE_URL has the port {port!r}, which is not a number from 1 to 65535") from None
    if parts.port == 0:
        raise ValueError("DATABASE_URL has the port 0, which is not a number from 1 to 65535")
    if not parts.path.strip("/") and "dbname=" not in query:
        raise ValueError("DATABASE_URL for PostgreSQL names no database: postgresql://user:password@host:5432/db")


def _shown(text: str) -> str:
    """`text` as an error may quote it: without a password (a URL's `user:password@`)."""
    return re.sub(r"([^:/@]+):[^@/]*@", r"\1:***@", text)


def redact_url(url: str) -> str:
    """The URL without its password (for doctor, logs and errors)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{unquote(parts.username or '')}:***@{parts.hostname or ''}"
    if parts.port:
        netloc += f":{parts.port}"
    return parts._replace(netloc=netloc).geturl()
