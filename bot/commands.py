"""The `council` commands. Imported by `bot.cli` only once the arguments are parsed: this module pulls in
the whole service (pydantic, httpx, aiohttp, storage), which `council --help` must not pay for."""

from __future__ import annotations

import argparse
import asyncio
import errno
import functools
import json
import os
import re
import sys
from collections.abc import Awaitable
from contextlib import AsyncExitStack
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

from bot.cli import EXIT_FAILED, EXIT_OK
from bot.render_text import (
    aggregate_table,
    ballot_line,
    bias_table,
    history_lines,
    leaderboard_table,
    result_header,
)
from core import seats
from core.attachments import IncomingFile
from core.engine.dissent import dissent_lines
from core.errors import ConfigurationError, CouncilError, InputRejected, Unreachable
from core.export import feedback_lines, leaderboard_document, to_json
from core.material import read_lines
from core.models import (
    ChairmanFinished,
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
    Synthesis,
)
from core.service import CouncilService
from core.settings import LOCAL_DEFAULT_MEMBERS, Settings, load_settings

T = TypeVar("T")
STAGE_TITLES = {1: "Stage 1 · members answer", 2: "Stage 2 · anonymous peer review", 3: "Stage 3 · chairman synthesis"}


def same_terminal() -> bool:
    """True when stdout and stderr are one terminal: what was streamed on stderr is already on screen."""
    try:
        return os.isatty(1) and os.isatty(2) and os.path.samestat(os.fstat(1), os.fstat(2))
    except OSError:
        return False


class Terminal:
    """Progress lines and the live synthesis on stderr, the result on stdout: pipes get clean output."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.streaming_model: str | None = None
        self.streamed: dict[str, str] = {}  # model -> text shown live

    def was_shown(self, model: str, text: str) -> bool:
        """Whether exactly this text by this model is on screen already (streamed live)."""
        return not self.quiet and self.streamed.get(model, "").strip() == text.strip()

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
            self.streamed[model] = ""
        self.streamed[model] += delta
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
        fallback = seats.fallback_note(a.model, a.attempts)
        term.note(
            f"  ✓ {a.model} answered ({a.latency_s or 0:.1f} s, {a.usage.completion_tokens} tokens)"
            + (f": {fallback}" if fallback else "")
        )
    elif isinstance(event, MemberFailed):
        term.note(f"  ✗ {event.answer.model} failed: {event.answer.error.short() if event.answer.error else '?'}")
    elif isinstance(event, ReviewFinished):
        r = event.review
        term.note(f"  {'✓' if r.ballot_models else '✗'} review by {r.reviewer}: {ballot_line(r)}")
    elif isinstance(event, ChairmanToken):
        term.stream(event.model, event.delta)


def print_result(result: CouncilResult, *, answer_shown: bool = False, answer_printed: bool = False) -> None:
    """The result on stdout; `answer_shown`: the final answer is on the same screen already;
    `answer_printed`: `print_answer` printed it as soon as it was complete."""
    header = result_header(result)
    if header:
        print(_plain(header) + "\n")
    if result.synthesis is not None and not answer_printed:
        print_answer(result.synthesis, answer_shown=answer_shown)
    read = read_lines(result.request)
    if read:
        print("━━ What the council read ━━")
        print("\n".join(read) + "\n")
    if result.aggregate is not None:
        print("━━ Aggregate ranking (lower mean rank is better) ━━")
        print(aggregate_table(result.aggregate).replace("```\n", "").replace("\n```", ""))
        parsed = sum(1 for r in result.reviews if r.ballot_models)
        print(f"Ballots read: {parsed} of {len(result.reviews)}")
        print("".join(f"{line}\n" for line in dissent_lines(result.aggregate)), end="")
    seconds = result.timings.get("total_s")
    cost = f", ${result.usage.cost_usd:.4f}" if result.usage.cost_usd else ""
    print(
        f"\nCouncil {result.council_id} · {result.status.value} · "
        f"{seconds or 0:.1f} s · {result.usage.prompt_tokens + result.usage.completion_tokens} tokens{cost}"
        f"\nDetails: council show {result.council_id}"
    )


def print_answer(synthesis: Synthesis, *, answer_shown: bool = False) -> None:
    who = "Chairman" if synthesis.by_chairman else "Fallback synthesizer"
    if answer_shown:
        print(f"━━ Final answer ({who}: {synthesis.model}): shown above ━━\n", flush=True)
    else:
        print(f"━━ Final answer ({who}: {synthesis.model}) ━━\n", flush=True)
        print(synthesis.text.strip() + "\n", flush=True)


def _plain(text: str) -> str:
    """Slack-style emoji shortcodes are noise on a terminal."""
    return re.sub(r":[a-z_]+: ", "", text)


# ---------------------------------------------------------------------------- commands


async def cmd_ask(service: CouncilService, args: argparse.Namespace) -> int:
    origin = Origin(platform=Platform.CLI, channel_id="terminal", user_id=args.user)
    term = Terminal(quiet=args.json or args.quiet)
    batch = await service.read_files(await _files_from_paths(args.file or []), Platform.CLI)
    for line in batch.user_notices():
        print(f"File notice: {line}", file=sys.stderr)
    search = True if args.search else None
    run = await service.start_council(
        args.question, origin, attachments=batch.attachments, search=search, mode=getattr(args, "mode", None)
    )
    if set(run.request.config.members) <= set(LOCAL_DEFAULT_MEMBERS):
        term.note(
            "ℹ This council runs tiny offline models (SmolLM2-135M, Gemma 3 270M) on this machine:\n"
            "  expect quirky answers (a grammar keeps their reviews in the ranking format). For real\n"
            "  models set OPENROUTER_API_KEY (or LLM_BASE_URL + LLM_API_KEY) and COUNCIL_MODELS; see README.\n"
        )
    config = run.request.config
    term.note(f"Council {run.council_id} ({config.mode}): {', '.join(config.members)} · chairman {config.chairman}")
    # The first line is out; the council task has not run a step yet (nothing awaited since it was
    # created), so the HTTP stack loads here rather than inside the first member's timed call.
    service.router.warm_up(seats.all_models([*config.members, config.chairman]))
    result: CouncilResult | None = None
    answer_printed = False
    try:
        async for event in run.events():
            _print_event(term, event)
            if isinstance(event, ChairmanFinished) and not args.json:
                # Out as soon as it is complete: reviews that no longer mattered may still be coming.
                term.note("")
                done = event.synthesis
                print_answer(done, answer_shown=same_terminal() and term.was_shown(done.model, done.text))
                answer_printed = True
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
        synthesis = result.synthesis
        shown = synthesis is not None and same_terminal() and term.was_shown(synthesis.model, synthesis.text)
        print_result(result, answer_shown=shown, answer_printed=answer_printed)
    return EXIT_FAILED if result.status in (CouncilStatus.FAILED, CouncilStatus.CANCELLED) else EXIT_OK


async def _files_from_paths(paths: list[str]) -> list[IncomingFile]:
    """`--file` paths as files with their bytes; one that cannot be read becomes a file the batch
    refuses by name (an empty name-only entry), so the council still runs on the others."""
    files = []
    for path in paths:
        try:
            data = await asyncio.to_thread(Path(path).read_bytes)
        except OSError as exc:
            print(f"File notice: {path}: cannot be read ({exc.strerror or exc})", file=sys.stderr)
            continue
        files.append(IncomingFile(name=Path(path).name, data=data))
    return files


async def cmd_history(service: CouncilService, args: argparse.Namespace) -> int:
    summaries = await service.history(None, "all", limit=args.limit)
    for line in history_lines(summaries):
        print(line.replace("`", ""))
    return EXIT_OK


async def cmd_show(service: CouncilService, args: argparse.Namespace) -> int:
    result = await service.get_result(args.council_id)
    votes = await service.feedback.votes(result.council_id)
    if args.json:
        print(to_json(result, votes))
        return EXIT_OK
    print(f"Question: {result.request.question}\n")
    for line in read_lines(result.request):
        print(line)
    if result.request.attachments or result.request.sources:
        print()
    for answer in result.answers:
        label = f"Response {answer.label} · " if answer.label else ""
        print(f"── {label}{answer.model} ──")
        print((answer.text or f"(failed: {answer.error.short() if answer.error else '?'})").strip() + "\n")
    for review in result.reviews:
        print(f"── review by {review.reviewer} ──")
        print((review.text or "").strip())
        print(ballot_line(review) + "\n")
    print_result(result)
    print("\nReaders' feedback: " + "\n".join(feedback_lines(votes)).replace("*", ""))
    return EXIT_OK


async def cmd_feedback(service: CouncilService, args: argparse.Namespace) -> int:
    entries = await service.feedback.recent(args.days, limit=args.limit)
    if not entries:
        print(f"No feedback in the last {args.days} day(s).")
        return EXIT_OK
    good = sum(e.vote.value == "good" for e in entries)
    print(f"{len(entries)} vote(s) in the last {args.days} day(s): 👍 {good} · 👎 {len(entries) - good}\n")
    for e in entries:
        mark = "👍" if e.vote.value == "good" else "👎"
        question = e.question.replace("\n", " ")
        question = question[:70] + ("…" if len(question) > 70 else "")
        where = f"{e.platform}:{e.channel_id or '-'}"
        print(f"{e.updated_at:%Y-%m-%d %H:%M} {mark} {e.council_id} {e.user_name or e.user_id} ({where}) — {question}")
        if e.comment:
            print(f"    “{e.comment}”")
    return EXIT_OK


async def cmd_export(service: CouncilService, args: argparse.Namespace) -> int:
    text = await service.export(args.council_id, "json" if args.format == "json" else "markdown")
    if args.output:
        try:
            await asyncio.to_thread(Path(args.output).write_text, text, encoding="utf-8")
        except OSError as exc:
            raise InputRejected(
                f"Cannot write {args.output}: {exc.strerror or exc}. Check that the folder exists and is writable."
            ) from None
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        print(text)
    return EXIT_OK


async def cmd_leaderboard(service: CouncilService, args: argparse.Namespace) -> int:
    board = await service.leaderboard(None, "all", rounds=args.rounds)
    if args.json:
        print(json.dumps(leaderboard_document(board), ensure_ascii=False, indent=2))
        return EXIT_OK
    text = bias_table(board) if args.bias else leaderboard_table(board)
    print(text.replace("```\n", "").replace("\n```", ""))
    if args.png:
        from bot.chart import leaderboard_png

        leaderboard_png(board, args.png)
        print(f"wrote {args.png}", file=sys.stderr)
    return EXIT_OK


async def cmd_usage(service: CouncilService, args: argparse.Namespace) -> int:
    rows = await service.queries.usage(None, days=args.days)
    if not rows:
        print(f"No councils in the last {args.days} days.")
        return EXIT_OK
    print(f"{'day':<10}  {'councils':>8}  {'tokens in':>10}  {'tokens out':>10}  {'cost':>10}")
    for row in rows:
        tokens = f"{row.prompt_tokens:>10}  {row.completion_tokens:>10}"
        print(f"{row.day:<10}  {row.councils:>8}  {tokens}  ${row.cost_usd:>9.4f}")
    total = sum(r.cost_usd for r in rows)
    print(f"total: {sum(r.councils for r in rows)} councils, ${total:.4f}")
    return EXIT_OK


async def cmd_prune(service: CouncilService, args: argparse.Namespace) -> int:
    removed = await service.queries.prune(parse_age(args.older_than))
    print(f"removed {removed} council(s) older than {args.older_than}")
    return EXIT_OK


async def cmd_doctor(service: CouncilService, args: argparse.Namespace) -> int:
    from bot.doctor import run_doctor

    return await run_doctor(service)


async def cmd_bots(service: CouncilService, args: argparse.Namespace) -> int:
    settings = service.settings
    worker = not args.no_worker
    if not worker and not service.durable.across_processes:
        raise ConfigurationError(
            "--no-worker needs PostgreSQL (DATABASE_URL=postgresql://...): "
            "on SQLite the bot process runs its own councils."
        )
    tasks = []
    slack = args.command in ("slack", "serve") and (settings.slack_bot_token or args.command == "slack")
    if slack:
        from bot.slack.app import run_slack

        http = getattr(args, "http", False)
        bot = run_slack(service, settings, http=http, port=args.port, worker=worker)
        tasks.append(_reporting("Slack", settings.slack_api_url, bot))
    if args.command in ("discord", "serve") and (settings.discord_token or args.command == "discord"):
        from bot.discord.client import run_discord

        # One worker per process serves every platform's queue: beside Slack, Slack's runs it.
        # Both bots register their deliverers before their first await, so it starts knowing both.
        discord = run_discord(service, settings, worker=worker and not slack)
        tasks.append(_reporting("Discord", settings.discord_api_url, discord))
    if args.command == "serve" and settings.api_keys:
        tasks.append(_api_server().serve_api(service))
    if not tasks:
        raise ConfigurationError(
            "Nothing to serve: set SLACK_BOT_TOKEN, DISCORD_TOKEN and/or COUNCIL_API_KEYS (see README)."
        )
    service.router.warm_up(seats.all_models([*settings.default_members, settings.default_chairman]))
    await asyncio.gather(*tasks)
    return EXIT_OK


async def cmd_worker(service: CouncilService, args: argparse.Namespace) -> int:
    """Councils only: no events are taken here. The platforms this process can post to are the
    ones whose tokens are set (their councils' queues are the ones it serves)."""
    settings = service.settings
    if not service.durable.across_processes:
        raise ConfigurationError(
            "council worker needs PostgreSQL (DATABASE_URL=postgresql://...): "
            "on SQLite the bot process runs its own councils."
        )
    if settings.slack_bot_token is None and settings.discord_token is None:
        raise ConfigurationError(
            "council worker posts answers to Slack and/or Discord: "
            "set SLACK_BOT_TOKEN and/or DISCORD_TOKEN (see README)."
        )
    async with AsyncExitStack() as stack:
        platforms = []
        if settings.slack_bot_token is not None:
            from bot.slack.app import build_slack_bot

            bot = build_slack_bot(service, settings)  # registers how Slack councils are shown and answered
            stack.push_async_callback(bot.aclose)
            platforms.append(("Slack", settings.slack_api_url))
        if settings.discord_token is not None:
            from bot.discord.surface import discord_surface
            from bot.following import deliver_durable

            surface = await _reporting(
                "Discord", settings.discord_api_url, discord_surface(settings)
            )  # REST only: intake stays with `council discord`
            stack.push_async_callback(surface.aclose)
            service.register_deliverer(Platform.DISCORD, functools.partial(deliver_durable, service, surface))
            platforms.append(("Discord", settings.discord_api_url))
        service.router.warm_up([*settings.default_members, settings.default_chairman])
        await _reporting(*platforms[0], service.durable.work())
    return EXIT_OK


def _api_server() -> Any:
    """bot.api.server, imported only by the commands that serve it (its packages are an extra)."""
    try:
        from bot.api import server
    except ModuleNotFoundError as exc:
        raise ConfigurationError(
            f"The API and MCP server need the `api` extra ({exc.name} is missing): pip install 'llm-council-bot[api]'."
        ) from None
    return server


async def cmd_api(service: CouncilService, args: argparse.Namespace) -> int:
    await _api_server().serve_api(service, args.host, args.port)
    return EXIT_OK


async def cmd_mcp(service: CouncilService, args: argparse.Namespace) -> int:
    await _api_server().serve_mcp_stdio(service)
    return EXIT_OK


def check_bot_settings(settings: Settings, args: argparse.Namespace) -> None:
    """The tokens a bot needs, checked before anything starts (ConfigurationError naming the setting)."""
    if args.command == "slack":
        if settings.slack_bot_token is None:
            raise ConfigurationError(
                "SLACK_BOT_TOKEN is not set: copy the Bot User OAuth Token (xoxb-...) from your "
                "Slack app's OAuth & Permissions page (see README, Slack)."
            )
        if (args.http or settings.slack_app_token is None) and settings.slack_signing_secret is None:
            raise ConfigurationError(
                "SLACK_SIGNING_SECRET is not set: the HTTP Events API needs it to verify requests "
                "(Basic Information page of your Slack app), or set SLACK_APP_TOKEN for Socket Mode."
            )
    if args.command == "discord" and settings.discord_token is None:
        raise ConfigurationError(
            "DISCORD_TOKEN is not set: copy the bot token from the Discord Developer Portal (Bot page; see README)."
        )


async def _reporting(platform: str, api_url: str | None, bot: Awaitable[T]) -> T:
    """Runs a bot (or logs in to a platform); a refused token, a busy port or an unreachable
    platform becomes one line naming it."""
    import aiohttp

    host = api_url or {"Slack": "https://slack.com/api/", "Discord": "https://discord.com/api"}[platform]
    try:
        return await bot
    except OSError as exc:
        if exc.errno in (errno.EADDRINUSE, errno.EACCES) and not isinstance(exc, aiohttp.ClientError):
            raise ConfigurationError(
                f"{platform}: cannot listen for events ({_reason(exc)}). Choose another port with --port."
            ) from exc
        raise _unreachable(platform, host, api_url, exc) from exc
    except (aiohttp.ClientConnectionError, TimeoutError) as exc:
        raise _unreachable(platform, host, api_url, exc) from exc
    except Exception as exc:
        refusal = _platform_refusal(platform, exc)
        if refusal is None:
            raise
        raise refusal from exc


def _unreachable(platform: str, host: str, api_url: str | None, exc: BaseException) -> Unreachable:
    setting = f" and {platform.upper()}_API_URL" if api_url else ""
    return Unreachable(
        f"Cannot reach {platform} at {host} ({_reason(exc)}). Check the network{setting}, then start the bot again."
    )


def _platform_refusal(platform: str, exc: Exception) -> ConfigurationError | None:
    """The platform's own 'no' to our credentials or intents, as a ConfigurationError naming the setting."""
    if platform == "Discord":
        import discord

        if isinstance(exc, discord.LoginFailure):
            return ConfigurationError(f"Discord refused the token ({_reason(exc)}): check DISCORD_TOKEN.")
        if isinstance(exc, discord.PrivilegedIntentsRequired):
            return ConfigurationError(
                "Discord refused the Message Content intent: enable it on the Bot page of the Developer Portal."
            )
        return None
    from slack_bolt.error import BoltError
    from slack_sdk.errors import SlackApiError

    if isinstance(exc, SlackApiError | BoltError):
        return ConfigurationError(
            f"Slack refused the token ({_reason(exc)}): check SLACK_BOT_TOKEN (and SLACK_APP_TOKEN for Socket Mode)."
        )
    return None


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return text or type(exc).__name__


def parse_age(text: str) -> timedelta:
    match = re.fullmatch(r"\s*(\d+)\s*([dhw])\s*", text)
    if not match:
        raise CouncilError(f"Cannot read the age {text!r}: use e.g. 90d, 12h or 4w.")
    amount, unit = int(match.group(1)), match.group(2)
    return {"d": timedelta(days=amount), "h": timedelta(hours=amount), "w": timedelta(weeks=amount)}[unit]


def settings_for(args: argparse.Namespace) -> Settings:
    overrides = {}
    if getattr(args, "members", None):
        overrides["COUNCIL_MODELS"] = args.members
    if getattr(args, "chairman", None):
        overrides["COUNCIL_CHAIRMAN"] = args.chairman
    settings = load_settings(**overrides)
    settings.database  # noqa: B018 - an unusable DATABASE_URL is reported before anything starts
    if args.command in ("slack", "discord"):
        check_bot_settings(settings, args)
    return settings


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


async def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "migrate-db":
        return await cmd_migrate_db(args)
    service = await CouncilService.open(settings)
    try:
        return await COMMANDS[args.command](service, args)
    finally:
        await service.aclose()


COMMANDS = {
    "ask": cmd_ask,
    "history": cmd_history,
    "show": cmd_show,
    "export": cmd_export,
    "leaderboard": cmd_leaderboard,
    "feedback": cmd_feedback,
    "usage": cmd_usage,
    "prune": cmd_prune,
    "doctor": cmd_doctor,
    "slack": cmd_bots,
    "discord": cmd_bots,
    "serve": cmd_bots,
    "worker": cmd_worker,
    "api": cmd_api,
    "mcp": cmd_mcp,
}
