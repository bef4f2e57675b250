"""The commands that read stored councils over the service: show, feedback, export, leaderboard, usage, prune,
doctor (`history` needs no service: bot/cli_commands/history.py)."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from datetime import timedelta
from pathlib import Path

from bot.cli_commands.exits import EXIT_FAILED, EXIT_OK
from bot.cli_commands.output import print_result
from bot.render_text import ballot_line, bias_table, leaderboard_table
from core.errors import CouncilError, InputRejected
from core.models import counted
from core.models.voice import answer_name, answer_state, lens_line, read_lines, review_state, revised_name
from core.service import CouncilService, diagnose, feedback_lines, leaderboard_document, to_json


async def cmd_show(service: CouncilService, args: argparse.Namespace) -> int:
    result = await service.queries.get_result(args.council_id, by_prefix=True)
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
        lens = lens_line(result.request.config.lens(answer.seat or answer.model))
        print(f"── {answer_name(answer)}{answer_state(result)}{f' · {lens}' if lens else ''} ──")
        print((answer.text or f"(failed: {answer.error.short() if answer.error else '?'})").strip() + "\n")
        final = result.final_text(answer)
        if answer.text and final and final != answer.text:
            print(f"── {revised_name(answer)} ──")
            print(final.strip() + "\n")
    for review in result.reviews:
        print(f"── review by {review.reviewer}{review_state(review)} ──")
        print((review.text or "").strip())
        print(ballot_line(review) + "\n")
    print_result(result, details=False, link=service.settings.council_url(result.council_id))
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
    text = await service.queries.export(args.council_id, "json" if args.format == "json" else "markdown")
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
    tenant = service.tenants.parse(args.tenant) if getattr(args, "tenant", None) else None
    if tenant is not None:
        spend = await service.tenants.budgets.spend(tenant)
        budget = f"${spend.daily_budget_usd:.2f}" if spend.daily_budget_usd is not None else "none"
        print(f"{tenant}: ${spend.spent_today_usd:.4f} spent today, daily budget {budget}")
    rows = await (
        service.tenants.budgets.usage(tenant, args.days) if tenant else service.queries.usage(None, days=args.days)
    )
    if not rows:
        print(f"No councils in the last {args.days} days.")
        return EXIT_OK
    print(f"{'day':<10}  {'councils':>8}  {'tokens in':>10}  {'tokens out':>10}  {'cost':>10}")
    for row in rows:
        tokens = f"{row.prompt_tokens:>10}  {row.completion_tokens:>10}"
        print(f"{row.day:<10}  {row.councils:>8}  {tokens}  ${row.cost_usd:>9.4f}")
    total = sum(r.cost_usd for r in rows)
    print(f"total: {counted(sum(r.councils for r in rows), 'council')}, ${total:.4f}")
    return EXIT_OK


async def cmd_prune(service: CouncilService, args: argparse.Namespace) -> int:
    removed = await service.queries.prune(parse_age(args.older_than))
    print(f"removed {removed} council(s) older than {args.older_than}")
    return EXIT_OK


async def cmd_doctor(service: CouncilService, args: argparse.Namespace) -> int:
    checks = await diagnose(service)
    for check in checks:
        mark = "✓" if check.ok and not check.warning else ("!" if check.ok else "✗")
        print(f"{mark} {check.name:<13} {check.detail}")
    return EXIT_OK if all(c.ok for c in checks) else EXIT_FAILED


def parse_age(text: str) -> timedelta:
    match = re.fullmatch(r"\s*(\d+)\s*([dhw])\s*", text)
    if not match:
        raise CouncilError(f"Cannot read the age {text!r}: use e.g. 90d, 12h or 4w.")
    amount, unit = int(match.group(1)), match.group(2)
    return {"d": timedelta(days=amount), "h": timedelta(hours=amount), "w": timedelta(weeks=amount)}[unit]
