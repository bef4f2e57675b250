"""`council migrate-db`: copies the stored history from one database to another."""

from __future__ import annotations

import argparse

from bot.cli import EXIT_OK
from core.errors import CouncilError


async def cmd_migrate_db(args: argparse.Namespace) -> int:
    """Runs without the service: it needs two databases and no model."""
    from core.storage import Storage, redact_url
    from core.storage.copy import TargetNotEmpty, copy_history

    try:
        source = await Storage.open(args.source)
    except Exception as exc:
        raise CouncilError(f"Cannot open {redact_url(args.source)}: {exc}") from None
    try:
        try:
            target = await Storage.open(args.target)
        except Exception as exc:
            raise CouncilError(f"Cannot open {redact_url(args.target)}: {exc}") from None
        try:
            report = await copy_history(source, target, merge=args.merge)
        except TargetNotEmpty as exc:
            raise CouncilError(str(exc)) from None
        finally:
            await target.close()
    finally:
        await source.close()
    counts = ", ".join(f"{n:,} {table}" for table, n in report.copied.items())
    print(f"copied {source.location} -> {target.location}: {counts}")
    if report.skipped_councils:
        print(f"{report.skipped_councils:,} councils were already there and kept as they were")
    return EXIT_OK
