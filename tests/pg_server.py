"""A real PostgreSQL server for the tests: one per test session, a fresh database per test.

The Debian `postgresql` package's binaries (/usr/lib/postgresql/<version>/bin) are used directly:
`initdb` into a temporary directory, `pg_ctl start` on a free loopback port with durability turned
off (fsync, synchronous_commit: a test server's data dies with it anyway). A server refuses to run
as root, so under root it runs as the unprivileged `postgres` system user (or `council-pg`, created
once with `useradd` when there is none). `PG_BIN` points at another binary directory.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import psycopg

from tests.loopback_app import free_port

SERVER_USER_CANDIDATES = ("postgres", "council-pg")
DB_USER = "council"


def find_bin_dir() -> Path | None:
    """The newest installed PostgreSQL binary directory with initdb, or None."""
    if os.environ.get("PG_BIN"):
        return Path(os.environ["PG_BIN"])
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def missing_reason() -> str | None:
    """Why the PostgreSQL tests cannot run here (None: they can)."""
    if find_bin_dir() is None:
        return "PostgreSQL server binaries not found (apt-get install -y postgresql, or set PG_BIN)"
    try:
        import psycopg_pool  # noqa: F401
    except ImportError:
        return "psycopg_pool is not installed (pip install -e '.[postgres]')"
    return None


def _server_user() -> str | None:
    """The unprivileged user that runs the server when we are root (None: run as ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in SERVER_USER_CANDIDATES:
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    useradd = shutil.which("useradd", path=f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin") or "useradd"
    subprocess.run([useradd, "--system", "--no-create-home", SERVER_USER_CANDIDATES[-1]], check=True)
    return SERVER_USER_CANDIDATES[-1]


class PostgresServer:
    """`start()`, then `new_database()` for each test's URL, `stop()` at the end."""

    def __init__(self) -> None:
        bin_dir = find_bin_dir()
        if bin_dir is None:
            raise RuntimeError(missing_reason() or "no PostgreSQL")
        self.bin_dir = bin_dir
        self.port = free_port()
        self.user = _server_user()
        self.root = Path(tempfile.mkdtemp(prefix="council-pg-"))
        self.data = self.root / "data"
        self._names = itertools.count(1)

    def _run(self, *args: str) -> None:
        command = [str(self.bin_dir / args[0]), *args[1:]]
        # As the server user, switched to by subprocess itself: no `runuser`, which a root shell
        # without /usr/sbin on its PATH would not find.
        account = pwd.getpwnam(self.user) if self.user else None
        subprocess.run(
            command,
            check=True,
            capture_output=True,
            cwd=self.root,
            user=account.pw_uid if account else None,
            group=account.pw_gid if account else None,
            extra_groups=[] if account else None,
        )

    def start(self) -> PostgresServer:
        if self.user:
            shutil.chown(self.root, self.user)
        self._run("initdb", "-D", str(self.data), "-U", DB_USER, "-A", "trust", "--no-sync", "-E", "UTF8")
        self.options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self.start_again()
        return self

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str, password: str | None = None) -> str:
        secret = f":{password}" if password else ""
        return f"postgresql://{DB_USER}{secret}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh empty database (copied from template0) and its URL."""
        name = f"t{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0 STRATEGY FILE_COPY')
        return self.url(name)

    def restart(self) -> None:
        """`pg_ctl restart -m fast`: every connection is closed with AdminShutdown, the server
        comes back on the same port with the same options (an operator's restart, a failover)."""
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-m", "fast", "-w", "restart")

    def stop_fast(self) -> None:
        """The server goes away (its data stays): `start_again` brings it back."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def start_again(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-o", self.options, "-l", str(self.root / "log"), "-w", "start")
