"""`council`: run councils from a terminal, browse history, and start the Slack/Discord bots.

Only argparse is imported up front, so `council --help` answers at once; `bot.commands` loads the
settings once a command has been chosen, and imports that command's module alone.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, NoReturn

from bot.cli_commands.exits import EXIT_FAILED, EXIT_REFUSED
from core.modes import MODES, modes_help

if TYPE_CHECKING:  # what `add_subparsers` returns (argparse has no public name for it)
    from core.settings import Settings

    _Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]


def _database_note() -> str:
    url = os.environ.get("DATABASE_URL", "").strip()
    if url:
        return f"history database:\n  {url} (DATABASE_URL)"
    from core.paths import default_database_path

    return f"history database:\n  {default_database_path()} (set DATABASE_URL to use another file)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="council",
        description="LLM Council: several models answer, rank each other, a chairman synthesizes.",
        epilog=_database_note() + "\n\nSettings come from the environment and .env (see .env.example).",
        formatter_class=argparse.RawDescriptionHelpFormatter,  # keeps the path on one line
    )
    parser.add_argument(
        "--verbose", "-v", action="store_true", help="debug logging on stderr, and tracebacks with errors"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    # The order of the subcommands is the order `council --help` lists them in.
    _add_ask(sub)
    _add_history_commands(sub)
    _add_admin_commands(sub)
    _add_server_commands(sub)
    _add_eval(sub)
    return parser


def _add_ask(sub: _Subparsers) -> None:
    ask = sub.add_parser("ask", help="run a council on a question")
    ask.add_argument("question")
    ask.add_argument("--json", action="store_true", help="print one JSON document (classic council shape plus more)")
    ask.add_argument("--quiet", "-q", action="store_true", help="no live progress")
    ask.add_argument(
        "--members",
        help="comma-separated seats for this council (overrides COUNCIL_MODELS); with fallbacks: primary|fallback",
    )
    ask.add_argument("--chairman", help="chairman model id or seat primary|fallback (overrides COUNCIL_CHAIRMAN)")
    ask.add_argument(
        "--mode",
        choices=MODES,
        help=modes_help(),
    )
    ask.add_argument(
        "--file",
        action="append",
        metavar="PATH",
        help="attach a file (PDF, DOCX, text, Markdown, CSV, JSON, code, PNG/JPEG/WebP/GIF); repeatable",
    )
    ask.add_argument("--search", action="store_true", help="search the web once before the council answers")
    ask.add_argument("--user", default="terminal", help=argparse.SUPPRESS)


def _add_history_commands(sub: _Subparsers) -> None:
    """Reading stored councils: history, show, export, leaderboard, feedback, usage."""
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
    board.add_argument("--bias", action="store_true", help="only the reviewers' bias audit")
    board.add_argument("--json", action="store_true", help='print {"ratings": [...], "bias": [...]} as JSON')

    feedback = sub.add_parser("feedback", help="recent readers' votes (👍/👎) and comments on answers")
    feedback.add_argument("--days", type=int, default=7, help="how far back (default 7 days)")
    feedback.add_argument("--limit", type=int, default=200)

    usage = sub.add_parser("usage", help="councils, tokens and cost per day")
    usage.add_argument("--days", type=int, default=30)
    usage.add_argument("--tenant", help="one workspace or server: slack:T…, discord:<guild id>, T… or a guild id")


def _add_admin_commands(sub: _Subparsers) -> None:
    """Looking after the database: prune, doctor, migrate-db."""
    prune = sub.add_parser("prune", help="delete old councils")
    prune.add_argument("--older-than", required=True, help="e.g. 90d, 12h, 4w")

    sub.add_parser("doctor", help="check keys, model ids and the database (and show where it is)")

    purge = sub.add_parser("purge", help="delete everything of one Slack workspace or Discord server")
    which = purge.add_mutually_exclusive_group(required=True)
    which.add_argument("--workspace", help="Slack team id (T…) or organisation id (E…)")
    which.add_argument("--guild", help="Discord server id")
    purge.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    sub.add_parser("rotate-secret", help="re-encrypt stored tokens and keys under the first COUNCIL_SECRET_KEY")
    budget = sub.add_parser("budget", help="a workspace's or server's daily budget (USD; `none` removes it)")
    budget.add_argument("--tenant", required=True, help="slack:T…, discord:<guild id>, T… or a guild id")
    budget.add_argument("usd", help="USD per day, or none")

    migrate = sub.add_parser("migrate-db", help="copy every council and setting into another database")
    migrate.add_argument("--from", dest="source", required=True, help="e.g. sqlite:///data/council.db")
    migrate.add_argument("--to", dest="target", required=True, help="e.g. postgresql://user:password@host:5432/db")
    migrate.add_argument("--merge", action="store_true", help="add to a database that already holds data")


def _add_server_commands(sub: _Subparsers) -> None:
    """Long-running processes: the bots, the worker, the OpenAI-compatible API and MCP."""
    slack = sub.add_parser("slack", help="run the Slack bot (Socket Mode if SLACK_APP_TOKEN is set)")
    slack.add_argument("--http", action="store_true", help="serve the HTTP Events API instead of Socket Mode")
    slack.add_argument("--port", type=int, default=3000)
    discord = sub.add_parser("discord", help="run the Discord bot")
    serve = sub.add_parser("serve", help="run every bot that has a token configured")
    serve.add_argument("--port", type=int, default=3000)
    for bot in (slack, discord, serve):
        bot.add_argument(
            "--no-worker",
            action="store_true",
            help="accept questions only; `council worker` processes run the councils (PostgreSQL)",
        )
    worker = sub.add_parser("worker", help="run councils accepted by the bots (PostgreSQL; no intake)")
    for process in (slack, discord, serve, worker):
        process.add_argument(
            "--metrics-port",
            type=int,
            help="serve /metrics, /health and /ready on this port (default COUNCIL_METRICS_PORT; none if unset)",
        )
        process.add_argument(
            "--host",
            help="the address the Slack HTTP receiver and the metrics server listen on (default COUNCIL_HTTP_HOST, "
            "0.0.0.0)",
        )
    api = sub.add_parser("api", help="serve the council as an OpenAI-compatible model (and MCP over HTTP at /mcp)")
    api.add_argument("--host", help="default COUNCIL_API_HOST (127.0.0.1)")
    api.add_argument("--port", type=int, help="default COUNCIL_API_PORT (8000)")
    sub.add_parser("mcp", help="serve the council as MCP tools on stdio")
    web = sub.add_parser("web", help="serve the browser app: history, live councils, leaderboard (docs/web.md)")
    web.add_argument("--host", help="default COUNCIL_WEB_HOST (127.0.0.1)")
    web.add_argument("--port", type=int, help="default COUNCIL_WEB_PORT (8080)")
    web.add_argument(
        "--revoke",
        metavar="USER|all",
        help="end the browser sign-ins of this user id (or everyone's) and exit, instead of serving",
    )
    for process in (slack, discord, serve, worker, api, web):
        process.add_argument(
            "--strict",
            action="store_true",
            help="refuse to start when a model of the line-up is unknown or its endpoint unreachable "
            "(COUNCIL_STRICT_STARTUP); default: a warning line each",
        )


def _add_eval(sub: _Subparsers) -> None:
    """`council eval`: bot/cli_commands/eval.py."""
    ev = sub.add_parser(
        "eval",
        help="measure the council against its members at equal compute (needs the eval extra)",
        description="Runs every configuration on the same samples (inspect-ai), stores each sample as it "
        "is scored, and reports accuracy with 95%% intervals, McNemar's test against the best member, "
        "calls, tokens, cost and latency. Run the same command again to continue an interrupted run.",
    )
    ev.add_argument(
        "--configs",
        help="comma-separated: standard, quick, auto, refine, member:<id>, chairman, self-consistency[:<id>], "
        "self-moa[:<id>] (default: all)",
    )
    ev.add_argument("--dataset", metavar="FILE", help="JSONL or CSV with input, target (and choices); default: bundled")
    ev.add_argument("--seed", type=int, help="seed of the bundled set (default 2026)")
    ev.add_argument("--size", type=int, help="items of the bundled set (default 250)")
    ev.add_argument("--limit", type=int, help="only the first N items")
    ev.add_argument("--scorer", choices=["exact", "numeric", "choice", "judge"], help="default: from the targets")
    ev.add_argument("--judge", metavar="MODEL", help="the model that grades with --scorer judge (default: chairman)")
    ev.add_argument("--concurrency", type=int, default=4, help="samples in flight (default 4)")
    ev.add_argument("--max-cost", type=float, metavar="USD", help="ask before a run estimated above this")
    ev.add_argument("--yes", "-y", action="store_true", help="run whatever the estimate")
    ev.add_argument("--new", action="store_true", help="start over instead of continuing an unfinished run")
    ev.add_argument("--log-dir", help="where inspect-ai writes its logs (for `inspect view`)")
    output = ev.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the report as JSON")
    output.add_argument("--csv", action="store_true", help="print the report as CSV")
    output.add_argument("--history", action="store_true", help="list stored eval runs")
    ev.add_argument(
        "--recommend",
        action="store_true",
        help="print the mode `best` runs for the configured line-up (from its latest finished eval run) and why",
    )
    ev.add_argument("--png", metavar="PATH", help="also write accuracy against cost per question (needs matplotlib)")


class _Redact:
    """The redactor once settings are loaded; until then there is no secret to hide. With
    LOG_FORMAT=json the error line is a log line too (every line of the process is JSON)."""

    apply = staticmethod(lambda text: text)
    json_lines = False


def _run(args: argparse.Namespace, own_process: bool) -> int:
    import asyncio

    with _start_up(own_process):
        from bot import commands
        from core.service import Redactor, collect_metrics, configure_logging, configure_telemetry

        settings = commands.settings_for(args)
    if own_process:
        collect_metrics(args.command in SERVERS)  # only they serve /metrics
    configure_telemetry(settings)
    redactor = Redactor.from_settings(settings)
    _Redact.apply = staticmethod(redactor)
    configure_logging(_log_level(args, settings), redactor, settings.telemetry.log_format)
    _Redact.json_lines = settings.telemetry.log_format == "json"
    return asyncio.run(commands.run(args, settings))


# Long-running processes log at INFO by default: a line per council for the operator.
SERVERS = frozenset({"slack", "discord", "serve", "worker", "api", "mcp", "web"})


def _log_level(args: argparse.Namespace, settings: Settings) -> str:
    """The terminal's own commands show the council themselves: their INFO lines ("council …
    started") would only interleave with it, so they log warnings unless LOG_LEVEL or -v asks."""
    if args.verbose:
        return "DEBUG"
    return settings.telemetry.log_level or ("INFO" if args.command in SERVERS else "WARNING")


def _fail(message: str, args: argparse.Namespace, code: int) -> int:
    if _Redact.json_lines or os.environ.get("LOG_FORMAT", "").strip().lower() == "json":
        _json_error(message, args.verbose)
        return code
    if args.verbose:
        import traceback

        print(_Redact.apply(traceback.format_exc()), file=sys.stderr, end="")
    print(f"council: {_Redact.apply(message)}", file=sys.stderr)
    return code


def _json_error(message: str, verbose: bool) -> None:
    """The error line as a JSON log line (LOG_FORMAT=json), also when the settings could not be
    read (then no secret is known, and a settings error never quotes one)."""
    import logging

    if not _Redact.json_lines:
        from core.service import Redactor, configure_logging

        configure_logging("INFO", Redactor([]), "json")
    logging.getLogger("council").error(message, exc_info=verbose)  # redacted by the handler


@contextmanager
def _start_up(own_process: bool) -> Iterator[None]:
    """Imports and settings with the cyclic garbage collector off, then what they built frozen out
    of its sight. Start-up allocates a few hundred thousand objects that live as long as the
    process; with the collector on, it traverses them over and over as they are made (about 40 ms
    of `council ask`), and again at every later full collection. Only for a process of our own:
    frozen objects are never freed, which a test run importing many things must not suffer."""
    if not own_process:
        yield
        return
    # httpx imports its own command-line client when click, rich and pygments are installed (the
    # dev and eval extras bring them): ~50 ms of a council's start-up for a client nobody runs here.
    # A None entry makes that optional import fail, which httpx expects and answers with a stub.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def _reader_gone() -> int:
    """`council history | head`: the reader stopped reading, which is no error of ours to report.
    Output still buffered for the closed pipe goes nowhere (Python's advice for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is no real file (a test's capture): nothing to redirect
        pass
    return EXIT_FAILED


def main(argv: Sequence[str] | None = None, own_process: bool = False) -> int:
    """The command's exit code. `own_process`: this process runs only this command (see `entry`)."""
    args = build_parser().parse_args(argv)
    from core.errors import CouncilError, Unreachable

    try:
        return _run(args, own_process)
    except Unreachable as exc:
        return _fail(exc.user_message, args, EXIT_FAILED)
    except CouncilError as exc:
        return _fail(exc.user_message, args, EXIT_REFUSED)
    except KeyboardInterrupt:
        return EXIT_FAILED
    except BrokenPipeError:
        return _reader_gone()
    except Exception as exc:  # last resort: one line, the traceback only on request
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        hint = "" if args.verbose else " (run with -v for the traceback)"
        return _fail(
            f"unexpected error: {type(exc).__name__}{': ' + detail if detail else ''}{hint}", args, EXIT_FAILED
        )


def entry() -> NoReturn:
    """The `council` command: `main`, then out without the interpreter's tear-down. By the time a
    command returns, its service, database and network sessions are closed; what tear-down would
    still do is free every object one by one and collect them once more (about 120 ms of a
    `council ask`). Exit handlers still run and the output is flushed. A thread still working
    (none of ours should be) gets the ordinary exit, which waits for it."""
    code = main(own_process=True)
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(code)
    atexit._run_exitfuncs()  # what the interpreter runs first at exit: logging's flush, temp files, children
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`council ask | head`): nothing more can be said
            code = code or EXIT_FAILED
    os._exit(code)


if __name__ == "__main__":
    entry()
