"""`council eval`: the council against its members at equal compute (core/eval, on inspect-ai).

Before anything is asked it says which run it starts or continues, how many samples are left and
what they should cost; above `--max-cost` it asks (a terminal) or refuses (`--yes` runs anyway).
Progress and the ETA go to stderr; the report (table, `--json` or `--csv`) to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import io
import json
import sys

from bot.cli_commands.exits import EXIT_FAILED, EXIT_OK
from core.errors import ConfigurationError
from core.models.eval import TOKEN_SLACK, ConfigReport, EvalProgress, EvalReport, EvalRequest, EvalStart
from core.models.voice import measured as voice
from core.service import CouncilService

CSV_COLUMNS = (
    "name",
    "accuracy",
    "ci_low",
    "ci_high",
    "mean_calls",
    "tokens",
    "cost_usd",
    "latency_p50_s",
    "latency_p95_s",
    "p_value",
    "escalated",
)


async def cmd_eval(service: CouncilService, args: argparse.Namespace) -> int:
    if args.history:
        return await _history(service)
    if args.recommend:
        return await _recommend(service, json_output=args.json)
    request = EvalRequest(
        configs=args.configs,
        dataset=args.dataset,
        seed=args.seed,
        size=args.size,
        limit=args.limit,
        scorer=args.scorer,
        judge=args.judge,
        concurrency=args.concurrency,
        new=args.new,
        log_dir=args.log_dir,
    )
    _require_inspect()
    start = await service.evals.prepare(request)
    _announce(start)
    _check_cost(start, args)
    progress = _ProgressLine()
    try:
        report = await service.evals.run(request, progress)
    except (KeyboardInterrupt, asyncio.CancelledError):
        progress.finish()
        print(
            "Interrupted: every sample scored so far is stored. Run the same command to continue (--new starts over).",
            file=sys.stderr,
        )
        return EXIT_FAILED
    progress.finish()
    _print_report(report, args)
    if args.png:
        from bot.chart import eval_png

        eval_png(report, args.png)
        print(f"wrote {args.png}", file=sys.stderr)
    return EXIT_OK


def _require_inspect() -> None:
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        raise ConfigurationError(
            "council eval runs on inspect-ai, which is not installed: pip install 'llm-council-bot[eval]'"
        ) from None


def _announce(start: EvalStart) -> None:
    what = f"continuing run {start.run_id} ({start.stored} samples stored)" if start.run_id else "starting a new run"
    print(
        f"council eval: {what} · {start.dataset} · {start.items} items × {len(start.configs)} configurations "
        f"({', '.join(start.configs)}) · scorer {start.scorer}",
        file=sys.stderr,
    )
    cost = f"${start.cost_usd:.4f}"
    if start.unpriced:
        cost += f" + unknown for {', '.join(start.unpriced)} (no MODEL_PRICES)"
    print(f"Estimated: {start.calls} model calls for {start.pending} samples, cost {cost}", file=sys.stderr)
    if start.log_dir:
        print(f"inspect-ai logs: {start.log_dir} (inspect view --log-dir {start.log_dir})", file=sys.stderr)


def _check_cost(start: EvalStart, args: argparse.Namespace) -> None:
    if args.max_cost is None or args.yes or not start.pending:
        return
    over = start.cost_usd > args.max_cost
    if not over and not start.unpriced:
        return
    why = (
        f"the estimated cost ${start.cost_usd:.4f} is above --max-cost ${args.max_cost:.4f}"
        if over
        else f"the cost of {', '.join(start.unpriced)} is unknown (no MODEL_PRICES), so --max-cost cannot be checked"
    )
    if not sys.stdin.isatty():
        raise ConfigurationError(f"{why}; pass --yes to run anyway")
    answer = input(f"{why[0].upper()}{why[1:]}. Run anyway? [y/N] ").strip().lower()
    if answer not in ("y", "yes"):
        raise ConfigurationError("not started (the estimate is above --max-cost)")


class _ProgressLine:
    """One line on stderr per configuration: samples done, rate and ETA (redrawn on a terminal)."""

    def __init__(self) -> None:
        self.live = sys.stderr.isatty()
        self.open = False
        self.last_decile = -1

    def __call__(self, p: EvalProgress) -> None:
        eta = f", ETA {_duration(p.eta_s)}" if p.eta_s is not None and p.done < p.total else ""
        line = f"  {p.config}: {p.done}/{p.total} samples, {_duration(p.elapsed_s)}{eta}"
        if self.live:
            print(f"\r\033[K{line}", end="" if p.done < p.total else "\n", file=sys.stderr, flush=True)
            self.open = p.done < p.total
            return
        decile = p.done * 10 // max(p.total, 1)
        if decile != self.last_decile or p.done == p.total:
            self.last_decile = -1 if p.done == p.total else decile
            print(line, file=sys.stderr, flush=True)

    def finish(self) -> None:
        if self.open:
            print(file=sys.stderr)
            self.open = False


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def _print_report(report: EvalReport, args: argparse.Namespace) -> None:
    if args.json:
        print(json.dumps(report.model_dump(mode="json"), indent=2))
    elif args.csv:
        print(report_csv(report), end="")
    else:
        print(report_table(report))


def report_csv(report: EvalReport) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in report.configs:
        writer.writerow(row.model_dump(include=set(CSV_COLUMNS)))
    return buffer.getvalue()


def _notes(row: ConfigReport, items: int) -> list[str]:
    """A row's notes: auto's escalations, failures, what is not scored yet, and more tokens than
    standard's beyond TOKEN_SLACK (equal compute is in calls and tokens)."""
    notes = []
    if row.escalated is not None:
        notes.append(f"escalated {row.escalated}/{row.samples}")
    if row.errors:
        notes.append(f"{row.errors} failed")
    if row.samples < items:
        notes.append(f"{row.samples}/{items} scored")
    if row.tokens_over_standard is not None:
        notes.append(f"tokens +{row.tokens_over_standard:.0%} over standard")
    return notes


def report_table(report: EvalReport) -> str:
    header = ("configuration", "accuracy", "95% CI", "vs best member", "calls", "tokens", "cost", "p50", "p95", "notes")
    rows = []
    for row in report.configs:
        versus = "—" if row.p_value is None else f"+{row.wins}/−{row.losses}, p={_p(row.p_value)}"
        if row.versus is None and row.name.startswith("member:") and any(r.p_value is not None for r in report.configs):
            versus = "(best member)"
        notes = _notes(row, report.items)
        rows.append(
            (
                row.name,
                f"{row.accuracy:.1%}",
                f"{row.ci_low:.1%}–{row.ci_high:.1%}",
                versus,
                f"{row.mean_calls:.2f}",
                f"{row.tokens:.0f}",
                "—" if row.cost_usd is None else f"${row.cost_usd:.5f}",
                "—" if row.latency_p50_s is None else f"{row.latency_p50_s:.2f}s",
                "—" if row.latency_p95_s is None else f"{row.latency_p95_s:.2f}s",
                ", ".join(notes),
            )
        )
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        f"Run {report.run} · {report.dataset} · scorer {report.scorer}" + ("" if report.complete else " · INCOMPLETE"),
        "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip(),
    ]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    if report.self_consistency:
        lines.append(f"self-consistency: {report.self_consistency} samples per question (majority vote)")
    if report.self_moa:
        lines.append(f"self-moa: {report.self_moa} samples per question, aggregated by the same model (one more call)")
    lines.append(
        "calls, tokens and cost are per question; vs best member: items won/lost against it, McNemar's exact p; "
        f"equal compute is in calls and tokens: a configuration over {TOKEN_SLACK - 1:.0%} more tokens than "
        "standard says so"
    )
    lines += independence_lines(report)
    lines += consensus_lines(report)
    return "\n".join(lines)


def independence_lines(report: EvalReport) -> list[str]:
    """The members' effective votes and their error correlation matrix (empty with fewer than two)."""
    votes, table = report.effective_votes, report.error_correlation
    if votes is None or table is None:
        return []
    lines = ["", voice.effective_votes_line(votes)]
    if votes.most_redundant is not None:
        lines.append(voice.redundant_seat_line(votes.most_redundant))
    width = max(len(m) for m in table.members)
    lines.append("error correlation (phi)".ljust(width) + "  " + "  ".join(m.rjust(8) for m in table.members))
    for name, row in zip(table.members, table.phi):
        cells = ["—".rjust(8) if v is None else f"{v:+.2f}".rjust(8) for v in row]
        lines.append(name.ljust(width) + "  " + "  ".join(cells))
    return lines


def consensus_lines(report: EvalReport) -> list[str]:
    """Each council's accuracy by consensus band, and its unsure threshold."""
    lines = []
    for c in report.consensus:
        lines += ["", f"{c.config}: accuracy by consensus (against {c.versus or 'no member'} on the same items)"]
        for measure, bands in (("rubric consensus", c.rubric), ("Kendall's W ×100", c.kendall_w)):
            if not any(b.items for b in bands):
                continue
            cells = [
                f"{b.low}–{b.high}: {_percent(b.accuracy)} vs {_percent(b.best_member_accuracy)} ({b.items})"
                for b in bands
            ]
            lines.append(f"  {measure}: " + " · ".join(cells))
        lines.append("  " + voice.threshold_line(c))
    return lines


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _p(value: float) -> str:
    return f"{value:.3f}" if value >= 0.001 else f"{value:.1e}"


async def _recommend(service: CouncilService, *, json_output: bool) -> int:
    """The strategy `best` would run now for the configured line-up, and the figures it read."""
    found = await service.evals.recommend()
    strategy, rows = found.strategy, found.configs
    if json_output:
        body = {**strategy.model_dump(mode="json"), "configs": [r.model_dump(mode="json") for r in rows]}
        print(json.dumps(body, indent=2))
        return EXIT_OK
    print(f"best: {strategy.line}")
    if rows:
        top = max(rows, key=lambda r: r.accuracy)
        print(f"the most accurate: {top.name} {top.accuracy:.1%} (95% CI {top.ci_low:.1%}–{top.ci_high:.1%})")
        for r in rows:
            within = "within its interval" if r.accuracy >= top.ci_low else "outside it"
            cost = "—" if r.cost_usd is None else f"${r.cost_usd:.5f}"
            chosen = "  ← chosen" if r.name == strategy.mode else ""
            print(f"  {r.name:<10} {r.accuracy:6.1%}  {r.mean_calls:5.2f} calls  {cost:>10}  {within}{chosen}")
    return EXIT_OK


async def _history(service: CouncilService) -> int:
    runs = await service.evals.history()
    if not runs:
        print("No eval runs yet: council eval --limit 20 runs a small one.")
        return EXIT_OK
    for run in runs:
        print(
            f"{run.id}  {run.created_at:%Y-%m-%d %H:%M}  {run.status:<9}  {run.samples}/{run.expected} samples  "
            f"{run.dataset}  [{', '.join(run.configs)}]"
        )
    return EXIT_OK
