"""compose.yaml (docs/deploying.md: many processes on one database) stays consistent with the code: it
parses, PostgreSQL and every bot and worker have a health check, the bots wait for a healthy
database, and every council command in it is one the CLI accepts."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import yaml

from bot.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
SERVICES = COMPOSE["services"]
COUNCIL = {name: s for name, s in SERVICES.items() if s.get("command", [""])[0] == "council"}


def test_postgres_two_bot_replicas_and_workers_each_with_a_health_check():
    assert SERVICES["db"]["image"].startswith("postgres:")
    assert "pg_isready" in " ".join(SERVICES["db"]["healthcheck"]["test"])
    bots = [n for n, s in COUNCIL.items() if s["command"][1:3] == ["slack", "--http"]]
    workers = [n for n, s in COUNCIL.items() if s["command"][1] == "worker"]
    assert len(bots) == 2 and workers
    for name, service in COUNCIL.items():
        assert service["healthcheck"]["test"], name
        assert service["depends_on"]["db"]["condition"] == "service_healthy", name
        assert service["environment"]["DATABASE_URL"].startswith("postgresql://"), name
    for name in bots:
        assert "--no-worker" in COUNCIL[name]["command"]  # intake and work scale separately
    for name, service in COUNCIL.items():  # ready: database and queue reachable (issue 25)
        check = " ".join(service["healthcheck"]["test"])
        port = "3000" if name in bots else "9100"
        assert f"127.0.0.1:{port}/ready" in check, name
        assert name in bots or service["command"][-2:] == ["--metrics-port", port], name
    balancer = " ".join(SERVICES["lb"]["command"])
    assert all(f"{name}:3000" in balancer for name in bots)


@pytest.mark.parametrize("name", sorted(COUNCIL))
def test_every_council_command_is_one_the_cli_accepts(name):
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    argv = COUNCIL[name]["command"][1:]
    if argv[0] not in commands or (
        "--no-worker" in argv and "--no-worker" not in commands[argv[0]].format_usage()
    ):  # pragma: no cover - until the job queue's `council worker` / `--no-worker` are merged
        pytest.skip(f"`council {shlex.join(argv)}` comes with the durable job queue")
    args = parser.parse_args(argv)
    assert args.command == argv[0]
