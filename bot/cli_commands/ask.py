"""`council ask`: one council on the terminal, its progress streamed on stderr and its result on stdout."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from bot.cli_commands.exits import EXIT_FAILED, EXIT_OK
from bot.cli_commands.output import Terminal, print_answer, print_event, print_lead, print_result, same_terminal
from core.models import (
    Aggregate,
    AggregateReady,
    ChairmanFinished,
    CouncilConfig,
    CouncilFinished,
    CouncilResult,
    CouncilStatus,
    Origin,
    Platform,
    seats,
)
from core.models.doubt import judge
from core.models.files import IncomingFile
from core.models.voice import measured
from core.service import CouncilRun, CouncilService, to_json
from core.settings import LOCAL_DEFAULT_MEMBERS

LOCAL_MODELS_NOTE = (
    "ℹ This council runs tiny offline models (SmolLM2-135M, Gemma 3 270M) on this machine:\n"
    "  expect quirky answers (a grammar keeps their reviews in the ranking format). For real\n"
    "  models set OPENROUTER_API_KEY (or LLM_BASE_URL + LLM_API_KEY) and COUNCIL_MODELS; see README (Real models).\n"
)


async def cmd_ask(service: CouncilService, args: argparse.Namespace) -> int:
    term = Terminal(quiet=args.json or args.quiet)
    run = await _start(service, args)
    _introduce(term, run)
    config = run.request.config
    # The first line is out; the council task has not run a step yet (nothing awaited since it was
    # created), so the HTTP stack loads here rather than inside the first member's timed call.
    service.router.warm_up(seats.all_models([*config.members, config.chairman]))
    result, answer_printed = await _follow(run, term, args)
    if args.json:
        print(to_json(result))
    else:
        synthesis = result.synthesis
        shown = synthesis is not None and same_terminal() and term.was_shown(synthesis.model, synthesis.text)
        link = service.settings.council_url(result.council_id)
        print_result(result, answer_shown=shown, answer_printed=answer_printed, link=link)
    return EXIT_FAILED if result.status in (CouncilStatus.FAILED, CouncilStatus.CANCELLED) else EXIT_OK


async def _start(service: CouncilService, args: argparse.Namespace) -> CouncilRun:
    """The council on the question and the readable `--file`s (the others are named on stderr)."""
    origin = Origin(platform=Platform.CLI, channel_id="terminal", user_id=args.user)
    batch = await service.reading.read_files(await _files_from_paths(args.file or []), Platform.CLI)
    for line in batch.user_notices():
        print(f"File notice: {line}", file=sys.stderr)
    search = True if args.search else None
    return await service.start_council(
        args.question, origin, attachments=batch.attachments, search=search, mode=getattr(args, "mode", None)
    )


def _introduce(term: Terminal, run: CouncilRun) -> None:
    config = run.request.config
    term.chairman = seats.seat_models(config.chairman)
    term.mode = config.mode
    if set(config.members) <= set(LOCAL_DEFAULT_MEMBERS):
        term.note(LOCAL_MODELS_NOTE)
    term.note(f"Council {run.council_id} ({config.mode}): {', '.join(config.members)} · chairman {config.chairman}")


async def _follow(run: CouncilRun, term: Terminal, args: argparse.Namespace) -> tuple[CouncilResult, bool]:
    """The council's events on the terminal until its result (Ctrl-C stops it and keeps what it has);
    also whether the final answer was printed already."""
    result: CouncilResult | None = None
    answer_printed = False
    aggregate: Aggregate | None = None
    try:
        async for event in run.events():
            print_event(term, event)
            if isinstance(event, AggregateReady):
                aggregate = event.aggregate
            if isinstance(event, ChairmanFinished) and not args.json:
                # Out as soon as it is complete: reviews that no longer mattered may still be coming.
                term.note("")
                print_lead(lead_lines(run.request.config, aggregate))
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
    return result, answer_printed


def lead_lines(config: CouncilConfig, aggregate: Aggregate | None) -> list[str]:
    """What the answer says first, known before the chairman's last word: measured doubt (from the
    ranking) and the strategy `best` chose."""
    unsure = judge(aggregate, config.unsure_below)
    lines = [measured.unsure_line(unsure)] if unsure is not None else []
    return lines + ([config.strategy.line] if config.strategy is not None else [])


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
