"""`council purge`, `council rotate-secret` and `council budget`: looking after tenants (service.tenants)."""

from __future__ import annotations

import argparse
import asyncio
import sys

from bot.cli_commands.exits import EXIT_OK, EXIT_REFUSED
from core.errors import InputRejected
from core.service import CouncilService


async def cmd_purge(service: CouncilService, args: argparse.Namespace) -> int:
    tenant = f"slack:{args.workspace.strip()}" if args.workspace else f"discord:{args.guild.strip()}"
    if not args.yes:
        if not sys.stdin.isatty():
            raise InputRejected(f"Purging {tenant} deletes all of its councils: confirm with --yes.")
        question = f"Delete every council, vote, file, setting, key and installation of {tenant}? [y/N] "
        answer = await asyncio.to_thread(input, question)
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing deleted")
            return EXIT_REFUSED
    counts = await service.tenants.purge(tenant, "cli")
    print(
        f"purged {tenant}: {counts.councils} council(s), {counts.channel_settings} channel setting(s), "
        f"{counts.keys} key(s), {counts.installations} installation(s)"
    )
    return EXIT_OK


async def cmd_rotate_secret(service: CouncilService, args: argparse.Namespace) -> int:
    count = await service.tenants.rotate_secret()
    print(f"re-encrypted {count} stored secret(s) under the first COUNCIL_SECRET_KEY; the others may now go")
    return EXIT_OK


async def cmd_budget(service: CouncilService, args: argparse.Namespace) -> int:
    tenant = service.tenants.parse(args.tenant)
    text = args.usd.strip().lower()
    try:
        usd = None if text in ("none", "off", "") else float(text)
    except ValueError:
        raise InputRejected(f"Cannot read the budget {args.usd!r}: give USD per day, e.g. 5, or none.") from None
    await service.tenants.budgets.set(tenant, usd)
    print(f"{tenant}: daily budget {'removed' if usd is None else f'${usd:.2f}'}")
    return EXIT_OK
