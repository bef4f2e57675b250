"""One connection to PostgreSQL before the pool opens: an unreachable server is one line within
seconds, naming the cause. psycopg_pool would retry for its whole open timeout (15 s) and then say
only that it timed out, so a typo in the host or a server that is down cost a quarter of a minute
and gave no reason."""

from __future__ import annotations

from urllib.parse import urlsplit

from core.database_url import DatabaseTarget
from core.storage.reconnect import DatabaseUnavailable

FIRST_CONNECT_S = 5  # libpq's connect_timeout for this attempt, unless DATABASE_URL sets its own


async def check_reachable(target: DatabaseTarget) -> None:
    """Connect once and close; DatabaseUnavailable ("cannot connect to <url> (<cause>)") if that fails."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    given = "connect_timeout" in conninfo_to_dict(target.location)
    extra = {} if given else {"connect_timeout": FIRST_CONNECT_S}
    try:
        connection = await psycopg.AsyncConnection.connect(target.location, **extra)  # type: ignore[arg-type]
    except psycopg.OperationalError as exc:
        raise DatabaseUnavailable(f"cannot connect to {target.display} ({_cause(exc, target)})") from None
    await connection.close()


def _cause(exc: Exception, target: DatabaseTarget) -> str:
    """libpq's reason, without the preamble that repeats the host: "Connection refused",
    'FATAL:  database "x" does not exist', "failed to resolve host ..."; never the password."""
    lines = str(exc).strip().splitlines()
    if not lines:
        return type(exc).__name__
    cause = lines[0].rsplit(" failed: ", 1)[-1].strip()
    cause = cause.removeprefix("FATAL:").strip()
    password = urlsplit(target.location).password
    if password:
        cause = cause.replace(password, "***")
    return cause or type(exc).__name__
