"""`council migrate-db`: copies the stored history from one database to another."""

from __future__ import annotations

import argparse

from bot.cli_commands.exits import EXIT_OK
from core.settings import Settings


async def cmd_migrate_db(_settings: Settings, args: argparse.Namespace) -> int:
    """Runs without the service: it needs two databases (named by its arguments) and no model."""
    from core.service import migrate_database

    report = await migrate_database(args.source, args.target, merge=args.merge)
    counts = ", ".join(f"{n:,} {table}" for table, n in report.copied.items())
    print(f"copied {report.source} -> {report.target}: {counts}")
    if report.skipped_councils:
        print(f"{report.skipped_councils:,} councils were already there and kept as they were")
    return EXIT_OK
