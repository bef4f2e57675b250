"""`council history`: the recent councils, read without the service (core/service/stored.py), so that the
listing answers as soon as Python, the settings and the database are up."""

from __future__ import annotations

import argparse

from bot.cli_commands.exits import EXIT_OK
from bot.render_text import history_lines
from core.service import open_queries
from core.settings import Settings


async def cmd_history(settings: Settings, args: argparse.Namespace) -> int:
    async with open_queries(settings) as queries:
        summaries = await queries.history(None, "all", limit=args.limit)
        # Running and interrupted councils too, read as they are: this command writes nothing.
        unfinished = await queries.unfinished(None, "all", limit=args.limit)
    for line in history_lines(summaries, unfinished)[: max(1, args.limit)]:
        print(line.replace("`", ""))
    return EXIT_OK
