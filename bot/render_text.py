"""Text rendering both platforms share: ping neutralising, ranking lines and tables (splitting
and cutting long text: bot/long_answer.py).

Platform renderers (bot/slack/render.py, bot/discord/render.py) wrap these strings in Block Kit
or embeds. Everything here is plain text with light markdown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.progress import CouncilProgress
from core.models import (
    MIN_BALLOTS,
    Aggregate,
    CorrelationCheck,
    CouncilResult,
    CouncilSummary,
    Leaderboard,
    RateCheck,
    UnfinishedCouncil,
    counted,
)
from core.models.text import clip as clip  # other renderers import it from here
from core.models.voice import (
    WAITING_FOR_MEMORY,
    Author,
    agreement_word,
    author_note,
    author_of,
    check_line,
    consensus_text,
    failure_line,
    judging_line,
    measured,
    other_notices,
    queued_line,
    score_lines,
    stage_progress,
)
from core.models.voice import ballot_line as ballot_line  # other renderers import these from here
from core.models.voice import ranking_line as ranking_line
from core.models.voice import short_model as short_model

ZWSP = "\u200b"

# Slack special mentions and user/group/channel references: <!channel>, <!here>, <!everyone>,
# <!subteam^S123>, <@U123>, <#C123>. Rendered harmless by breaking the angle-bracket syntax.
_SLACK_MENTION = re.compile(r"<(?=[!@#])")
# Discord: @everyone/@here, <@id>, <@!id>, <@&role>. AllowedMentions.none() already stops the
# ping; this keeps the text from *looking* like one in other clients and logs.
_DISCORD_MASS = re.compile(r"@(everyone|here)", re.IGNORECASE)
_DISCORD_REF = re.compile(r"<(@[!&]?\d+)>")


def neutralize_slack(text: str) -> str:
    """Stop model text from pinging anyone in Slack (Slack parses `<!here>` even in mrkdwn)."""
    text = _SLACK_MENTION.sub("<" + ZWSP, text)
    return re.sub(r"@(channel|here|everyone)\b", "@" + ZWSP + r"\1", text, flags=re.IGNORECASE)


def neutralize_discord(text: str) -> str:
    text = _DISCORD_MASS.sub("@" + ZWSP + r"\1", text)
    return _DISCORD_REF.sub(lambda m: "<" + ZWSP + m.group(1) + ">", text)


def aggregate_table(aggregate: Aggregate | None) -> str:
    """A fixed-width table inside a code block."""
    if aggregate is None or not aggregate.entries:
        return "No aggregate ranking."
    header = f"{'#':>2}  {'model':<32} {'mean':>5} {'votes':>5} {'borda':>6} {'copeland':>8} {'1st':>3}"
    rows = [header, "-" * len(header)]
    for e in aggregate.entries:
        mean = f"{e.average_rank:.2f}" if e.average_rank is not None else "  -  "
        rows.append(
            f"{e.position:>2}  {e.model[:32]:<32} {mean:>5} {e.rankings_count:>5} "
            f"{e.borda:>6.1f} {e.copeland:>8.1f} {e.first_place_votes:>3}"
        )
    footer = f"ballots used: {aggregate.ballots_used}, unreadable: {aggregate.ballots_unparsed}"
    if aggregate.agreement_w is not None:
        footer += f", Kendall's W: {aggregate.agreement_w:.2f} ({agreement_word(aggregate.agreement_w)})"
    if (consensus := consensus_text(aggregate)) is not None:
        footer += f", {consensus}"
    scores = "".join(f"\nscores {line}" for line in score_lines(aggregate))
    return "```\n" + "\n".join(rows) + "\n```\n" + footer + scores


def progress_lines(progress: CouncilProgress) -> list[str]:
    """Human-readable status while a council runs."""
    lines: list[str] = []
    if progress.queued_position is not None:
        lines.append(f":hourglass: {queued_line(progress.queued_position)}")
        return lines
    answered = progress.counts()[0]
    lines.append(stage_progress(progress.stage, mode=progress.mode, escalated=progress.escalated))
    if progress.schedule and progress.stage == 1:
        lines.append(f"🧮 in memory: {progress.schedule}")
    for member in progress.members.values():
        icon = {"answered": "✅", "failed": "❌", "thinking": "⏳", "waiting": "🧮"}[member.state]
        extra = f" ({member.latency_s:.1f}s)" if member.latency_s is not None else ""
        if member.detail:
            extra = f" — {member.detail}"
        elif member.state == "waiting":
            extra = f" — {WAITING_FOR_MEMORY}"
        lines.append(f"{icon} {short_model(member.model)}{extra}")
    lines += agreement_lines(progress)
    lines += [f"🔁 {line}" for line in progress.rounds]
    if progress.revising is not None:
        lines.append(
            f"🔁 Round {progress.revising}: members revise ({progress.revisions_done}/{progress.revisions_expected})"
        )
    if progress.stage >= 2:
        lines.append(
            f"📝 reviews: {progress.reviews_done}/{progress.reviews_expected or answered} "
            f"({counted(progress.reviews_parsed, 'ballot')} read)"
        )
    if progress.stage >= 3:
        lines.append(f"🪑 {short_model(progress.chairman_model or progress.chairman or 'chairman')} is writing…")
    return lines


def agreement_lines(progress: CouncilProgress) -> list[str]:
    """Auto mode's check of the first two answers, while it runs and once decided."""
    if progress.judging is not None:
        return [f"⚖️ {judging_line(short_model(progress.judging))}…"]
    check = progress.agreement
    if check is None:
        return []
    return [f"{'↗️' if check.escalated else '🤝'} {check_line(check)}"]


def result_header(result: CouncilResult, *, stand_in: bool = True, lead: bool = True) -> str:
    """First line(s) of a result: measured doubt and `best`'s strategy first (`lead`), then
    degradation, before the answer, never after. `stand_in`: with the note of a failed chairman
    (False: the caller puts it under the answer's heading)."""
    if result.status.value == "failed":
        return f":warning: {failure_line(result)}"
    if result.status.value == "cancelled":
        return ":octagonal_sign: The council was stopped."
    # Measured doubt and the strategy `best` chose come before everything else.
    lines = [f":grey_question: {line}" for line in measured.lead_lines(result)] if lead else []
    infos = other_notices(result)
    note = author_note(result)
    if note is not None and result.synthesis is not None and author_of(result.synthesis) is Author.STAND_IN:
        lines += [f":warning: {note}"] if stand_in else []
    elif note is not None:  # an answer standing as written: why, first of the notices
        infos.insert(0, note)
    # A chairman seat's fallback note (by_chairman) is one of the notices like the members' ones.
    if infos:
        lines.append(":information_source: " + " ".join(infos))
    return "\n".join(lines)


def history_lines(summaries: list[CouncilSummary], unfinished: Sequence[UnfinishedCouncil] = ()) -> list[str]:
    """One line per council, newest first; `unfinished` ones say "running" or "interrupted"."""
    if not summaries and not unfinished:
        return ["No councils yet."]
    lines = [(s.created_at, _summary_line(s)) for s in summaries]
    lines += [(u.created_at, _unfinished_line(u)) for u in unfinished]
    return [line for _, line in sorted(lines, key=lambda pair: pair[0], reverse=True)]


def _question_cell(question: str) -> str:
    question = question.replace("\n", " ")
    return question[:80] + ("…" if len(question) > 80 else "")


def _mode_cell(mode: str) -> str:
    return f" · {mode}" if mode != "standard" else ""


def _unfinished_line(u: UnfinishedCouncil) -> str:
    state = "interrupted (its process stopped)" if u.interrupted else "running"
    return (
        f"`{u.council_id}` {u.created_at:%Y-%m-%d %H:%M} · {state}{_mode_cell(u.mode)} — {_question_cell(u.question)}"
    )


def _summary_line(s: CouncilSummary) -> str:
    winner = short_model(s.winner) if s.winner else "—"
    agreement = f"W={s.agreement_w:.2f}" if s.agreement_w is not None else "W=–"
    if s.consensus is not None:
        agreement += f" · consensus {s.consensus:.0f}"
    cost = f"${s.cost_usd:.4f}" if s.cost_usd else "$0"
    duration = f"{s.duration_s:.0f}s" if s.duration_s is not None else "–"
    question = _question_cell(s.question)
    votes = f" · 👍 {s.votes_good} 👎 {s.votes_bad}" if s.votes_good or s.votes_bad else ""
    read = ""
    if s.files:
        names = ", ".join(name.replace("`", "'") for name in s.files)
        read += f" · read {names[:120]}"
    if s.sources:
        read += f" · {s.sources} web source(s)"
    return (
        f"`{s.council_id}` {s.created_at:%Y-%m-%d %H:%M} · {s.status.value}{_mode_cell(s.mode)} · winner {winner} · "
        f"{agreement} · {cost} · {duration}{read}{votes} — {question}"
    )


def approval_cell(good: int, bad: int) -> str:
    """Readers' approval as "75% (3/4)": share of 👍 among the votes, with the counts."""
    total = good + bad
    return f"{100 * good / total:.0f}% ({good}/{total})" if total else "-"


def leaderboard_table(board: Leaderboard) -> str:
    if not board.rows and not board.approval:
        return f"No rankings stored yet ({board.scope})."
    approval = {a.model: a for a in board.approval}
    header = (
        f"{'#':>2}  {'model':<30} {'rating':>6} {'95% CI':>13} {'win%':>5} {'mean':>5} {'n':>4} {'fail%':>5}"
        f" {'👍 as chairman':>15} {'👍 as winner':>15}"
    )
    rows = [header, "-" * len(header)]

    def votes(model: str) -> str:
        a = approval.pop(model, None)
        if a is None:
            return f" {'-':>15} {'-':>15}"
        return f" {approval_cell(a.chairman_good, a.chairman_bad):>15} {approval_cell(a.winner_good, a.winner_bad):>15}"

    for i, r in enumerate(board.rows, 1):
        mean = f"{r.average_rank:.2f}" if r.average_rank is not None else "  -  "
        rows.append(
            f"{i:>2}  {r.model[:30]:<30} {r.rating:>6.0f} {f'{r.low:.0f}–{r.high:.0f}':>13} "
            f"{100 * r.win_rate:>4.0f}% {mean:>5} {r.councils:>4} {100 * r.failure_rate:>4.0f}%" + votes(r.model)
        )
    for model in list(approval):  # chairmen that are no council's member: no rating, only votes
        rows.append(f"{'':>2}  {model[:30]:<30} {'-':>6} {'-':>13} {'-':>5} {'-':>5} {'-':>4} {'-':>5}" + votes(model))
    return (
        "```\n" + "\n".join(rows) + "\n```\n"
        f"{counted(board.councils, 'council')}, {counted(board.ballots, 'ballot')} ({board.scope}); "
        "Bradley-Terry ratings with bootstrap 95% intervals; 👍: readers' approval of the answers a model wrote "
        "as chairman and of the councils it won."
        + "".join(f"\n{line}" for line in seat_lines(board))
        + ("\n\n" + bias_table(board) if board.bias else "")
    )


def _pct(value: float | None) -> str:
    return f"{100 * value:.0f}%" if value is not None else "-"


def _rate_cell(check: RateCheck | None) -> str:
    if check is None:
        return "-"
    mark = " ⚑" if check.flagged else ""
    return f"{_pct(check.rate)} [{_pct(check.low)}–{_pct(check.high)}] vs {_pct(check.expected)}{mark}"


def _correlation_cell(check: CorrelationCheck | None) -> str:
    if check is None or check.correlation is None:
        return f"- ({check.withheld})" if check is not None and check.withheld else "-"
    mark = " ⚑" if check.flagged else ""
    interval = f" [{check.low:+.2f}–{check.high:+.2f}]" if check.low is not None and check.high is not None else ""
    return f"r={check.correlation:+.2f}{interval}{mark}"


def bias_table(board: Leaderboard) -> str:
    """The reviewers' bias audit (core/records/bias.py) as a fixed-width table and its legend."""
    if not board.bias:
        return f"Reviewer bias: no ballots audited yet ({board.scope})."
    header = f"{'reviewer':<30} {'n':>4}  {'ranks shown-first 1st':<30} {'own answer 1st':<30} length vs rank"
    rows = [header, "-" * len(header)]
    for b in board.bias:
        position = _rate_cell(
            RateCheck(
                rate=b.first_position_rate,
                expected=b.expected,
                ballots=b.ballots,
                low=b.low,
                high=b.high,
                flagged=b.flagged,
            )
        )
        rows.append(
            f"{b.reviewer[:30]:<30} {b.ballots:>4}  {position:<30} {_rate_cell(b.self_preference):<30} "
            f"{_correlation_cell(b.length)}"
        )
    flagged = [b.reviewer for b in board.bias if b.flagged]
    verdict = f"position bias flagged: {', '.join(flagged)}" if flagged else "no position bias flagged"
    return (
        "Reviewer bias\n```\n" + "\n".join(row.rstrip() for row in rows) + "\n```\n"
        f"{verdict}. Rates with 95% Wilson intervals against a position-blind reviewer (mean of 1/n); "
        "length: correlation of an answer's length with its rank position (below 0: longer answers "
        f"ranked higher), 95% Fisher interval, not given for (pairs): ballots of two answers, where it is "
        f"±1 by construction, (few): under {MIN_BALLOTS} ballots, (equal): answers of one length; "
        f"⚑: the interval excludes the fair value (never below {MIN_BALLOTS} ballots)."
    )


def seat_lines(board: Leaderboard) -> list[str]:
    """Each configured seat with fallbacks: its models' stored latency and failure rate, in order."""
    lines = []
    for seat in board.seats:
        parts = []
        for m in seat.models:
            latency = f"{m.average_latency_s:.1f} s" if m.average_latency_s is not None else "- s"
            parts.append(f"{short_model(m.model)} {latency}, {100 * m.failure_rate:.0f}% failed of {m.answers}")
        lines.append(f"Seat {seat.seat}: " + " → ".join(parts))
    return lines
