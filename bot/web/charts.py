"""Charts as SVG drawn on the server: no script, no library, nothing loaded. Colours come from the
stylesheet by class (presentation only), so they follow the light or dark theme; every chart has a
<title> and the same figures are in a table beside it for readers and screen readers."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup, escape

from core.models import LeaderboardRow
from core.models.browse import ModelCall
from core.models.eval import ConfigReport
from core.models.voice import agreement_text

WIDTH = 640


def _svg(height: float, title: str, body: list[str], width: int = WIDTH) -> Markup:
    return Markup(
        f'<svg class="chart" viewBox="0 0 {width} {height:.0f}" role="img" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{escape(title)}</title>{''.join(body)}</svg>"
    )


def agreement_meter(w: float | None) -> Markup:
    """Kendall's W as a bar from 0 (no agreement) to 1 (every ballot the same)."""
    if w is None:
        return Markup("")
    filled = max(0.0, min(1.0, w)) * 300
    meter = _svg(
        24,
        f"Agreement (Kendall's W): {w:.2f}",
        [
            '<rect class="meter-track" x="0" y="4" width="300" height="16" rx="8"/>',
            f'<rect class="meter-fill" x="0" y="4" width="{filled:.1f}" height="16" rx="8"/>',
        ],
        width=300,
    )
    return Markup(f'{meter}<span class="meter-value">{escape(agreement_text(w))}</span>')


def _fluid(height: float, title: str, body: list[str]) -> Markup:
    """A chart as wide as its column, drawn in percentages of its width: its text keeps its size on
    a phone (a viewBox would shrink it with the chart) and nothing needs scrolling sideways."""
    return Markup(
        f'<svg class="chart fluid" width="100%" height="{height:.0f}" role="img" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{escape(title)}</title>{''.join(body)}</svg>"
    )


def _pct(value: float) -> str:
    return f"{max(0.0, min(100.0, value)):.2f}%"


LINE = 16  # a label's line above its bar
BAR = 12


def timeline(calls: Sequence[ModelCall]) -> Markup:
    """Each model call as a bar on the council's clock, by stage, with its label on its own line
    above it (labels never overlap the bars); a failed call is hatched."""
    if not calls:
        return Markup("")
    end = max(call.end_s for call in calls) or 1.0
    row = LINE + BAR + 6
    body = []
    for index, call in enumerate(calls):
        y = index * row
        start, width = call.start_s / end * 100, max(0.4, (call.end_s - call.start_s) / end * 100)
        state = "" if call.ok else " failed"
        label = f"{call.role}: {call.model}"
        took = f"{call.start_s:.1f}–{call.end_s:.1f} s"
        tip = f"{label}, {took}" + (f", {call.attempts} tries" if call.attempts > 1 else "")
        body.append(
            f'<text class="chart-text" x="0" y="{y + 12}">{escape(label[:60])}</text>'
            f'<text class="chart-text" x="100%" y="{y + 12}" text-anchor="end">{took}</text>'
            f'<rect class="stage{call.stage}{state}" x="{_pct(start)}" y="{y + LINE}" width="{_pct(width)}" '
            f'height="{BAR}"><title>{escape(tip)}</title></rect>'
        )
    axis_y = len(calls) * row + 12
    body.append(f'<text class="chart-text" x="0" y="{axis_y}">0 s</text>')
    body.append(f'<text class="chart-text" x="100%" y="{axis_y}" text-anchor="end">{end:.1f} s</text>')
    return _fluid(axis_y + 6, "Model calls over time", body)


def rating_intervals(rows: Sequence[LeaderboardRow]) -> Markup:
    """Each model's rating as a dot on its 95% interval, its name and rating on the line above."""
    if not rows:
        return Markup("")
    low = min(row.low for row in rows)
    high = max(row.high for row in rows)
    span = (high - low) or 1.0
    row_h = LINE + 18
    body = []
    for i, row in enumerate(rows):
        y = i * row_h
        x1, x2, xm = (2 + (v - low) / span * 96 for v in (row.low, row.high, row.rating))
        line_y = y + LINE + 8
        body.append(
            f'<text class="chart-text" x="0" y="{y + 12}">{escape(row.model[:60])}</text>'
            f'<text class="chart-text" x="100%" y="{y + 12}" text-anchor="end">{row.rating:.0f} '
            f"({row.low:.0f}–{row.high:.0f})</text>"
            f'<line class="interval" x1="{_pct(x1)}" x2="{_pct(x2)}" y1="{line_y}" y2="{line_y}"/>'
            f'<circle class="point" cx="{_pct(xm)}" cy="{line_y}" r="5"><title>{escape(row.model)}: '
            f"{row.rating:.0f} ({row.low:.0f}–{row.high:.0f})</title></circle>"
        )
    return _fluid(len(rows) * row_h + 4, "Ratings with 95% intervals", body)


def accuracy_cost(configs: Sequence[ConfigReport]) -> Markup:
    """Each configuration's accuracy (with its interval) against its cost per question."""
    points = [c for c in configs if c.cost_usd is not None]
    if not points:
        return Markup("")
    height, left, bottom = 260, 60, 230
    most = max(c.cost_usd or 0.0 for c in points) or 1.0
    body = [
        f'<line class="axis" x1="{left}" y1="10" x2="{left}" y2="{bottom}"/>',
        f'<line class="axis" x1="{left}" y1="{bottom}" x2="{WIDTH - 10}" y2="{bottom}"/>',
        f'<text class="chart-text" x="4" y="16">100%</text><text class="chart-text" x="4" y="{bottom}">0%</text>',
        f'<text class="chart-text" x="{WIDTH - 130}" y="{height - 6}">${most:.4f}/question</text>',
    ]
    for c in points:
        x = left + (c.cost_usd or 0.0) / most * (WIDTH - left - 150)
        y, y1, y2 = (bottom - v * (bottom - 10) for v in (c.accuracy, c.ci_low, c.ci_high))
        body.append(
            f'<line class="interval" x1="{x:.1f}" x2="{x:.1f}" y1="{y1:.1f}" y2="{y2:.1f}"/>'
            f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="5"><title>{escape(c.name)}: '
            f"{c.accuracy:.0%}</title></circle>"
            f'<text class="chart-text" x="{x + 8:.1f}" y="{y + 4:.1f}">{escape(c.name[:24])}</text>'
        )
    return _svg(height, "Accuracy against cost per question", body)
