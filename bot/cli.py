"""`council`: run councils from a terminal, browse history, and start the Slack/Discord bots."""

from __future__ import annotations

import argparse
import asyncio
import logging
import re
import sys
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

from bot.render_text import aggregate_table, ballot_line, history_lines, leaderboard_table, result_header
from core.errors import CouncilError
from core.export import to_json
from core.models import (
    ChairmanToken,
    CouncilFinished,
    CouncilQueued,
    CouncilResult,
    CouncilStatus,
    MemberFailed,
    MemberFinished,
    MemberStarted,
    Origin,
    Platform,
    ReviewFinished,
    StageStarted,
)
from core.service import CouncilService
from core.settings import LOCAL_DEFAULT_MEMBERS, Settings

EXIT_OK, EXIT_FAILED, EXIT_REFUSED = 0, 1, 2
STAGE_TITLES = {1: "Stage 1 · members answer", 2: "Stage 2 · anonymous peer review", 3: "Stage 3 · chairman synthesis"}


class Terminal:
    """Progress lines on stderr, the synthesis streamed on stdout: pipes get clean output."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.streaming_model: str | None = None

    def note(self, line: str) -> None:
        if not self.quiet:
            self._end_stream()
            print(line, file=sys.stderr, flush=True)

    def stream(self, model: str, delta: str) -> None:
        if self.quiet:
            return
        if self.streaming_model != model:
            self._end_stream()
            print(f"\n── {model} ──", file=sys.stderr, flush=True)
            self.streaming_model = model
        sys.stderr.write(delta)
        sys.stderr.flush()

    def _end_stream(self) -> None:
        if self.streaming_model is not None:
            print(file=sys.stderr, flush=True)
            self.streaming_model = None


def _print_event(term: Terminal, event) -> None:
    if isinstance(event, CouncilQueued):
        term.note(f"⏳ waiting for a free slot (position {event.position})")
    elif isinstance(event, StageStarted):
        term.note(f"\n▶ {STAGE_TITLES[event.stage]}")
    elif isinstance(event, MemberStarted):
        term.note(f"  … {event.model} is thinking")
    elif isinstance(event, MemberFinished):
        a = event.answer
        term.note(f"  ✓ {a.model} answered ({a.latency_s or 0:.1f} s, {a.usage.completion_tokens} tokens)")
    elif isinstance(event, MemberFailed):
        term.note(f"  ✗ {event.answer.model} failed: {event.answer.error.short() if event.answer.error else '?'}")
    elif isinstance(event, ReviewFinished):
        r = event.review
        term.note(f"  {'✓' if r.ballot_models else '✗'} review by {r.reviewer}: {ballot_line(r)}")
    elif isinstance(event, ChairmanToken):
        term.stream(event.model, event.delta)


def print_result(result: CouncilResult) -> None:
    header = result_header(result)
    if header:
        print(_plain(header) + "\n")
    if result.synthesis is not None:
        who = "Chairman" if result.synthesis.by_chairman else "Fallback synthesizer"
        print(f"━━ Final answer ({who}: {result.synthesis.model}) ━━\n")
        print(result.synthesis.text.strip() + "\n")
    if result.aggregate is not None:
        print("━━ Aggregate ranking (lower mean rank is better) ━━")
        print(aggregate_table(result.aggregate).replace("```\n", "").replace("\n```", ""))
        parsed = sum(1 for r in result.reviews if r.ballot_models)
        print(f"Ballots read: {parsed} of {len(result.reviews)}")
    seconds = result.timings.get("total_s")
    cost = f", ${result.usage.cost_usd:.4f}" if result.usage.cost_usd else ""
    print(
        f"\nCouncil {result.council_id} · {result.status.value} · "
        f"{seconds or 0:.1f} s · {result.usage.prompt_tokens + result.usage.completion_tokens} tokens{cost}"
        f"\nDetails: council show {result.council_id}"
    )


def _plain(text: str) -> str:
    """Slack-style emoji shortcodes are noise on a terminal."""
    return re.sub(r":[a-z_]+: ", "", text)


# ---------------------------------------------------------------------------- commands


async def cmd_ask(service: CouncilService, args: argparse.Namespace) -> int:
    origin = Origin(platform=Platform.CLI, channel_id="terminal", user_id=args.user)
    run = await service.start_council(args.question, origin)
    term = Terminal(quiet=args.json or args.quiet)
    if set(run.request.config.members) <= set(LOCAL_DEFAULT_MEMBERS):
        term.note(
            "ℹ This council runs tiny offline models (SmolLM2-135M, Gemma 3 270M) on this machine:\n"
            "  expect quirky answers (a grammar keeps their reviews in the ranking format). For real\n"
            "  models set OPENROUTER_API_KEY (or LLM_BASE_URL + LLM_API_KEY) and COUNCIL_MODELS; see README.\n"
        )
    term.note(
        f"Council {run.council_id}: {', '.join(run.request.config.members)} · chairman {run.request.config.chairman}"
    )
    result: CouncilResult | None = None
    try:
        async for event in run.events():
            _print_event(term, event)
            if isinstance(event, CouncilFinished):
                result = event.result
    except (KeyboardInterrupt, asyncio.CancelledError):
        run.control.stop()
        result = await run.wait()
    term.note("")
    assert result is not None
    if args.json:
        print(to_json(result))
    else:
        print_result(result)
    return EXIT_FAILED if result.status in (CouncilStatus.FAILED, CouncilStatus.CANCELLED) else EXIT_OK


async def cmd_history(service: CouncilService, args: argparse.Namespace) -> int:
    summaries = await service.history(None, "all", limit=args.limit)
    for line in history_lines(summaries):
        print(line.replace("`", ""))
    return EXIT_OK


async def cmd_show(service: CouncilService, args: argparse.Namespace) -> int:
    result = await service.get_result(args.council_id)
    if args.json:
        print(to_json(result))
        return EXIT_OK
    print(f"Question: {result.request.question}\n")
    for answer in result.answers:
        label = f"Response {answer.label} · " if answer.label else ""
        print(f"── {label}{answer.model} ──")
        print((answer.text or f"(failed: {answer.error.short() if answer.error else '?'})").strip() + "\n")
    for review in result.reviews:
        print(f"── review by {review.reviewer} ──")
        print((review.text or "").strip())
        print(ballot_line(review) + "\n")
    print_result(result)
    return EXIT_OK


async def cmd_export(service: CouncilService, args: argparse.Namespace) -> int:
    text = await service.export(args.council_id, "json" if args.format == "json" else "markdown")
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        print(text)
    return EXIT_OK


async def cmd_leaderboard(service: CouncilService, args: argparse.Namespace) -> int:
    board = await service.leaderboard(None, "all", rounds=args.rounds)
    print(leaderboard_table(board).replace("```\n", "").replace("\n```", ""))
    if args.png:
        from bot.chart import leaderboard_png

        leaderboard_png(board, args.png)
        print(f"wrote {args.png}", file=sys.stderr)
    return EXIT_OK


async def cmd_usage(service: CouncilService, args: argparse.Namespace) -> int:
    rows = await service.usage(None, days=args.days)
    if not rows:
        print(f"No councils in the last {args.days} days.")
        return EXIT_OK
    print(f"{'day':<10}  {'councils':>8}  {'tokens in':>10}  {'tokens out':>10}  {'cost':>10}")
    for row in rows:
        print(
            f"{row.day:<10}  {row.councils:>8}  {row.prompt_tokens:>10}  {row.completion_tokens:>10}  ${row.cost_usd:>9.4f}"
        )
    total = sum(r.cost_usd for r in rows)
    print(f"total: {sum(r.councils for r in rows)} councils, ${total:.4f}")
    return EXIT_OK


async def cmd_prune(service: CouncilService, args: argparse.Namespace) -> int:
    removed = await service.prune(parse_age(args.older_than))
    print(f"removed {removed} council(s) older than {args.older_than}")
    return EXIT_OK


async def cmd_doctor(service: CouncilService, args: argparse.Namespace) -> int:
    from bot.doctor import run_doctor

    return await run_doctor(service)


async def cmd_bots(service: CouncilService, args: argparse.Namespace) -> int:
    settings = service.settings
    tasks = []
    if args.command in ("slack", "serve") and (settings.slack_bot_token or args.command == "slack"):
        from bot.slack.app import run_slack

        tasks.append(run_slack(service, settings, http=getattr(args, "http", False), port=args.port))
    if args.command in ("discord", "serve") and (settings.discord_token or args.command == "discord"):
        from bot.discord.client import run_discord

        tasks.append(run_discord(service, settings))
    if not tasks:
        print("Nothing to serve: set SLACK_BOT_TOKEN and/or DISCORD_TOKEN (see README).", file=sys.stderr)
        return EXIT_REFUSED
    await asyncio.gather(*tasks)
    return EXIT_OK


def parse_age(text: str) -> timedelta:
    match = re.fullmatch(r"\s*(\d+)\s*([dhw])\s*", text)
    if not match:
        raise CouncilError(f"Cannot read the age {text!r}: use e.g. 90d, 12h or 4w.")
    amount, unit = int(match.group(1)), match.group(2)
    return {"d": timedelta(days=amount), "h": timedelta(hours=amount), "w": timedelta(weeks=amount)}[unit]


COMMANDS = {
    "ask": cmd_ask,
    "history": cmd_history,
    "show": cmd_show,
    "export": cmd_export,
    "leaderboard": cmd_leaderboard,
    "usage": cmd_usage,
    "prune": cmd_prune,
    "doctor": cmd_doctor,
    "slack": cmd_bots,
    "discord": cmd_bots,
    "serve": cmd_bots,
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="council", description="LLM Council: several models answer, rank each other, a chairman synthesizes."
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="debug logging on stderr")
    sub = parser.add_subparsers(dest="command", required=True)

    ask = sub.add_parser("ask", help="run a council on a question")
    ask.add_argument("question")
    ask.add_argument("--json", action="store_true", help="print one JSON document (classic council shape plus more)")
    ask.add_argument("--quiet", "-q", action="store_true", help="no live progress")
    ask.add_argument("--members", help="comma-separated model ids for this council (overrides COUNCIL_MODELS)")
    ask.add_argument("--chairman", help="chairman model id (overrides COUNCIL_CHAIRMAN)")
    ask.add_argument("--user", default="terminal", help=argparse.SUPPRESS)

    hist = sub.add_parser("history", help="recent councils")
    hist.add_argument("--limit", type=int, default=20)

    show = sub.add_parser("show", help="one council, every stage")
    show.add_argument("council_id")
    show.add_argument("--json", action="store_true")

    export = sub.add_parser("export", help="export a council as Markdown or JSON")
    export.add_argument("council_id")
    export.add_argument("--format", choices=["md", "json"], default="md")
    export.add_argument("--output", "-o", help="write to this file instead of stdout")

    board = sub.add_parser("leaderboard", help="model ratings from every stored ballot")
    board.add_argument("--rounds", type=int, default=1000, help="bootstrap rounds for the 95%% intervals")
    board.add_argument("--png", help="also write a chart with the intervals (needs matplotlib)")

    usage = sub.add_parser("usage", help="councils, tokens and cost per day")
    usage.add_argument("--days", type=int, default=30)

    prune = sub.add_parser("prune", help="delete old councils")
    prune.add_argument("--older-than", required=True, help="e.g. 90d, 12h, 4w")

    sub.add_parser("doctor", help="check keys, model ids and the database")

    migrate = sub.add_parser("migrate-db", help="copy every council and setting into another database")
    migrate.add_argument("--from", dest="source", required=True, help="e.g. sqlite:///data/council.db")
    migrate.add_argument("--to", dest="target", required=True, help="e.g. postgresql://user:password@host:5432/db")
    migrate.add_argument("--merge", action="store_true", help="add to a database that already holds data")

    slack = sub.add_parser("slack", help="run the Slack bot (Socket Mode if SLACK_APP_TOKEN is set)")
    slack.add_argument("--http", action="store_true", help="serve the HTTP Events API instead of Socket Mode")
    slack.add_argument("--port", type=int, default=3000)
    sub.add_parser("discord", help="run the Discord bot")
    serve = sub.add_parser("serve", help="run every bot that has a token configured")
    serve.add_argument("--port", type=int, default=3000)
    return parser


def _settings_for(args: argparse.Namespace) -> Settings:
    overrides = {}
    if getattr(args, "members", None):
        overrides["COUNCIL_MODELS"] = args.members
    if getattr(args, "chairman", None):
        overrides["COUNCIL_CHAIRMAN"] = args.chairman
    return Settings(**overrides)


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


async def _main(args: argparse.Namespace) -> int:
    if args.command == "migrate-db":
        return await cmd_migrate_db(args)
    service = await CouncilService.open(_settings_for(args))
    try:
        return await COMMANDS[args.command](service, args)
    finally:
        await service.aclose()


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        return asyncio.run(_main(args))
    except CouncilError as exc:
        print(f"council: {exc.user_message}", file=sys.stderr)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
