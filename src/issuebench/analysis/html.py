"""One self-contained HTML page for a report: inline CSS and hand-made SVG plots, no script, no network.

Plots: resolved rate with its interval, cost against rate with the Pareto frontier, a per-repository
heat map, and stacked outcome categories. Every number on a plot is also in a table below it.
"""

from __future__ import annotations

import itertools
import math
import re
from html import escape
from importlib import resources
from string import Template

from issuebench import __version__
from issuebench.analysis import steps as agent_steps
from issuebench.analysis.outcomes import OUTCOME_ORDER
from issuebench.analysis.report import HEADLINE, WIDER_HEADER, Report, headline_rows, wider_rows

# Colour-blind-safe palette (Okabe-Ito) for the outcome categories, plus grey for "not graded".
OUTCOME_COLOURS = {
    "Resolved": "#009E73", "Breaking Resolved": "#56B4E9", "Partially Resolved": "#F0E442",
    "Work in Progress": "#E69F00", "No-Op": "#999999", "Regression": "#D55E00", "not graded": "#DDDDDD",
}
ACCENT = "#0072B2"
FONT = "font-family:inherit"


def _fmt_pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _svg(width: int, height: int, body: list[str], label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" '
            f'role="img" aria-label="{escape(label)}" style="max-width:{width}px">' + "".join(body) + "</svg>")


def _text(x: float, y: float, s: str | list[str], *, anchor: str = "start", size: int = 12, fill: str = "#333",
          weight: str = "normal", cls: str = "") -> str:
    """One label; a list is one label on several lines, the first at y (each line a tspan, so the
    label's text is the name whole)."""
    lines = [s] if isinstance(s, str) else s
    css = f' class="{cls}"' if cls else ""
    head = (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" fill="{fill}" '
            f'font-weight="{weight}" style="{FONT}"{css}>')
    if len(lines) == 1:
        return head + escape(lines[0]) + "</text>"
    spans = "".join(f'<tspan x="{x:.1f}" dy="{0 if i == 0 else LINE_HEIGHT * size:.1f}">{escape(line)}</tspan>'
                    for i, line in enumerate(lines))
    return head + spans + "</text>"


# Labels are measured, never cut: a name is laid out on as many lines as its width needs. The
# width of a character is estimated generously (the page's widest font, DejaVu Sans, averages under
# 0.6 em, bold about 10% more), so an estimated label is never wider on the page than its room.
CHAR_EM = 0.62
BOLD = 1.1
LINE_HEIGHT = 1.15


def text_width(s: str, size: float, weight: str = "normal") -> float:
    return len(s) * size * CHAR_EM * (BOLD if weight == "bold" else 1.0)


def wrap_label(s: str, width: float, size: float, weight: str = "normal") -> list[str]:
    """`s` on lines no wider than `width`, broken after _ - / . or a space where it can be (an id
    reads whole across the lines), else inside a word. Joined, the lines give `s` back."""
    per_line = max(4, int(width / (size * CHAR_EM * (BOLD if weight == "bold" else 1.0))))
    lines: list[str] = []
    line = ""
    for piece in re.findall(r"[^_\-/. ]*[_\-/. ]?", s):
        while len(piece) > per_line:
            if line:
                lines.append(line)
                line = ""
            lines.append(piece[:per_line])
            piece = piece[per_line:]
        if line and len(line) + len(piece) > per_line:
            lines.append(line)
            line = piece
        else:
            line += piece
    if line or not lines:
        lines.append(line)
    return lines


def label_column(names: list[str], size: float, *, most: float = 340.0, least: float = 120.0) -> tuple[float, int]:
    """The room (px) left of a plot for row labels, and the most lines a label needs there."""
    room = min(most, max([least - 20, *(text_width(n, size) for n in names)]))
    lines = max([1, *(len(wrap_label(n, room, size)) for n in names)])
    return room + 20, lines


def rate_plot(report: Report) -> str:
    """Horizontal bars of the rate, with the Wilson interval as a whisker."""
    n = len(report.systems)
    left, lines = label_column([s.name for s in report.systems], 12)
    plot_w, right, top = 450, 120, 30  # the right margin holds the label past a 100% whisker
    row = max(30, round(12 * LINE_HEIGHT * lines) + 12)
    width, height = round(left + plot_w + right), top + row * n + 40
    body = []
    for tick in range(0, 101, 20):
        x = left + plot_w * tick / 100
        body.append(f'<line x1="{x:.1f}" y1="{top - 8}" x2="{x:.1f}" y2="{top + row * n}" stroke="#e5e5e5"/>')
        body.append(_text(x, top + row * n + 18, f"{tick}%", anchor="middle", size=11, fill="#666"))
    for i, s in enumerate(report.systems):
        y = top + i * row
        body.append(_row_label(left - 10, y + row / 2, s.name, left - 20))
        w = plot_w * s.rate
        body.append(f'<rect x="{left}" y="{y + 6}" width="{w:.1f}" height="{row - 12}" rx="3" fill="{ACCENT}" '
                    f'fill-opacity="0.8"><title>{escape(s.name)}: {s.resolved}/{s.total}</title></rect>')
        lo, hi = left + plot_w * s.ci_low, left + plot_w * s.ci_high
        mid = y + row / 2
        body.append(f'<line x1="{lo:.1f}" y1="{mid}" x2="{hi:.1f}" y2="{mid}" stroke="#222" stroke-width="1.5"/>')
        for x in (lo, hi):
            body.append(f'<line x1="{x:.1f}" y1="{mid - 6}" x2="{x:.1f}" y2="{mid + 6}" stroke="#222" stroke-width="1.5"/>')
        body.append(_text(hi + 8, mid + 4, f"{_fmt_pct(s.rate)}  ({s.resolved}/{s.total})", size=11, fill="#222"))
    body.append(_text(left, 16, "resolved rate, whiskers: 95% Wilson interval", size=11, fill="#666"))
    return _svg(width, height, body, "resolved rate per system with 95% intervals")


def _row_label(x: float, mid: float, name: str, room: float, size: int = 12) -> str:
    """A row's name, right-aligned at x and centred on the row, on as many lines as `room` needs."""
    lines = wrap_label(name, room, size)
    first = mid + 4 - (len(lines) - 1) * LINE_HEIGHT * size / 2
    return _text(x, first, lines, anchor="end", size=size, cls="row-label")


def cost_plot(report: Report) -> str:
    """Mean cost per task (x) against rate (y); the Pareto frontier joined by a step line."""
    priced = [s for s in report.systems if s.mean_cost_per_task is not None]
    width, height = 760, 380
    left, right, top, bottom = 70, 30, 20, 50
    pw, ph = width - left - right, height - top - bottom
    body = []
    if not priced:
        body.append(_text(width / 2, height / 2, "no cost data: pass --predictions with cost or usage fields",
                          anchor="middle", fill="#888"))
        return _svg(width, 80, [_text(width / 2, 45, "no cost data: pass --predictions with cost or usage fields",
                                      anchor="middle", fill="#888")], "no cost data")
    cost_step = _nice_step(max(s.mean_cost_per_task or 0.0 for s in priced) * 1.05 / 5)
    max_cost = cost_step * 5
    max_rate = min(1.0, math.ceil(max(s.ci_high for s in priced) * 10) / 10) or 1.0

    def px(cost: float) -> float:
        return left + pw * cost / max_cost

    def py(rate: float) -> float:
        return top + ph * (1 - rate / max_rate)

    rate_ticks = round(max_rate * 10)
    for k in range(rate_ticks + 1):
        rate = k / 10
        body.append(f'<line x1="{left}" y1="{py(rate):.1f}" x2="{left + pw}" y2="{py(rate):.1f}" stroke="#eee"/>')
        body.append(_text(left - 8, py(rate) + 4, f"{10 * k}%", anchor="end", size=11, fill="#666"))
    for k in range(6):
        cost = cost_step * k
        body.append(_text(px(cost), top + ph + 18, f"{cost:.4g}", anchor="middle", size=11, fill="#666"))
    body.append(f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#999"/>')
    body.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="#999"/>')
    body.append(_text(left + pw / 2, height - 8, "mean cost per task", anchor="middle", size=12, fill="#444"))
    body.append(f'<text transform="translate(16,{top + ph / 2}) rotate(-90)" text-anchor="middle" font-size="12" '
                f'fill="#444" style="{FONT}">resolved rate</text>')
    frontier = sorted((s for s in priced if s.pareto), key=lambda s: s.mean_cost_per_task or 0.0)
    if len(frontier) > 1:
        pts = []
        for a, b in itertools.pairwise(frontier):
            pts += [f"{px(a.mean_cost_per_task or 0):.1f},{py(a.rate):.1f}",
                    f"{px(b.mean_cost_per_task or 0):.1f},{py(a.rate):.1f}"]
        last = frontier[-1]
        pts.append(f"{px(last.mean_cost_per_task or 0):.1f},{py(last.rate):.1f}")
        body.append(f'<polyline points="{" ".join(pts)}" fill="none" stroke="{ACCENT}" stroke-width="2" '
                    'stroke-dasharray="5 4"/>')
    # The points, then each label placed: the next label goes where it covers none of them.
    taken: list[Box] = [(px(s.mean_cost_per_task or 0.0) - 8, py(s.rate) - 8, px(s.mean_cost_per_task or 0.0) + 8,
                         py(s.rate) + 8) for s in priced]
    for s in priced:
        x, y = px(s.mean_cost_per_task or 0.0), py(s.rate)
        body.append(f'<line x1="{x:.1f}" y1="{py(s.ci_low):.1f}" x2="{x:.1f}" y2="{py(s.ci_high):.1f}" '
                    'stroke="#bbb" stroke-width="1.5"/>')
        fill = ACCENT if s.pareto else "#fff"
        body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="6" fill="{fill}" stroke="{ACCENT}" stroke-width="2">'
                    f'<title>{escape(s.name)}: {_fmt_pct(s.rate)}, {s.mean_cost_per_task:.4f} per task</title></circle>')
        body.append(_point_label(x, y, s.name, (width, height), taken))
    body.append(_text(left + pw - 4, top + 12, "filled: on the Pareto frontier", anchor="end", size=11, fill="#666"))
    return _svg(width, height, body, "cost per task against resolved rate, with the Pareto frontier")


Box = tuple[float, float, float, float]  # left, top, right, bottom


def _point_label(x: float, y: float, name: str, page: tuple[float, float], taken: list[Box],
                 size: int = 11) -> str:
    """A point's name beside it: above or below, right or left, moved further off when another
    label is there, inside the plot; wrapped when neither side holds it whole."""
    width, height = page
    step = LINE_HEIGHT * size
    tries: list[tuple[str, float, list[str]]] = []
    for anchor in ("start", "end"):
        room = width - 4 - (x + 10) if anchor == "start" else x - 10 - 4
        tries.append((anchor, room, wrap_label(name, room, size)))
    tries.sort(key=lambda t: len(t[2]))  # the side that holds it on fewer lines first
    fallback = None
    for anchor, _room, lines in tries:  # fewer lines first, then the nearest free place
        for shift in range(6):
            for above in (True, False):
                first = y - 8 - (len(lines) - 1 + shift) * step if above else y + size + 8 + shift * step
                w = max(text_width(line, size) for line in lines)
                left = x + 10 if anchor == "start" else x - 10 - w
                box = (left, first - size, left + w, first + (len(lines) - 1) * step + 3)
                inside = box[0] >= 2 and box[1] >= 2 and box[2] <= width - 2 and box[3] <= height - 2
                if not inside:
                    continue
                label = _text(x + (10 if anchor == "start" else -10), first, lines, anchor=anchor, size=size,
                              cls="point-label")
                fallback = fallback or (label, box)
                if not any(_overlap(box, other) for other in taken):
                    taken.append(box)
                    return label
    label, box = fallback or (_text(x + 10, y - 8, wrap_label(name, width / 2, size), size=size,
                                    cls="point-label"), (x, y, x, y))
    taken.append(box)
    return label


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _nice_step(raw: float) -> float:
    """The smallest of 1, 2, 2.5, 5 x 10^k at or above `raw`: axis ticks a reader can add up."""
    if raw <= 0:
        return 1.0
    base = 10 ** math.floor(math.log10(raw))
    return next(m * base for m in (1, 2, 2.5, 5, 10) if m * base >= raw - 1e-12)


def _heat_colour(rate: float) -> str:
    # White to the accent blue; text turns white on dark cells.
    r0, g0, b0 = 247, 251, 255
    r1, g1, b1 = 8, 81, 156
    r, g, b = (round(lo + (hi - lo) * rate) for lo, hi in ((r0, r1), (g0, g1), (b0, b1)))
    return f"#{r:02x}{g:02x}{b:02x}"


def repo_heatmap(report: Report) -> str:
    systems, repos = report.systems, report.repos
    cell_w, cell_h = 120, 28
    left, _ = label_column(repos, 12, most=300)
    heads = [wrap_label(s.name, cell_w - 8, 11, "bold") for s in systems]
    head_lines = max([1, *(len(h) for h in heads)])
    top = 20 + round(11 * LINE_HEIGHT * head_lines) + 8
    width = round(left + cell_w * len(systems) + 20)
    height = top + cell_h * len(repos) + 10
    body = []
    for j, lines in enumerate(heads):  # every system's name whole, on as many lines as it needs
        first = top - 10 - (len(lines) - 1) * LINE_HEIGHT * 11
        body.append(_text(left + cell_w * j + cell_w / 2, first, lines, anchor="middle", size=11, weight="bold",
                          cls="col-head"))
    for i, repo in enumerate(repos):
        y = top + cell_h * i
        body.append(_row_label(left - 10, y + cell_h / 2, repo, left - 20))
        for j, s in enumerate(systems):
            x = left + cell_w * j
            rr = s.per_repo.get(repo)
            if rr is None:
                body.append(f'<rect x="{x + 1}" y="{y + 1}" width="{cell_w - 2}" height="{cell_h - 2}" fill="#fafafa" '
                            'stroke="#eee"/>')
                body.append(_text(x + cell_w / 2, y + cell_h / 2 + 4, "-", anchor="middle", fill="#aaa"))
                continue
            body.append(f'<rect x="{x + 1}" y="{y + 1}" width="{cell_w - 2}" height="{cell_h - 2}" rx="2" '
                        f'fill="{_heat_colour(rr.rate)}"><title>{escape(repo)} / {escape(s.name)}: '
                        f'{rr.resolved}/{rr.total}</title></rect>')
            body.append(_text(x + cell_w / 2, y + cell_h / 2 + 4, f"{_fmt_pct(rr.rate)} ({rr.resolved}/{rr.total})",
                              anchor="middle", size=11, fill="#fff" if rr.rate > 0.55 else "#222"))
    return _svg(width, height, body, "resolved rate per repository and system")


def outcome_plot(report: Report) -> str:
    cats = [*OUTCOME_ORDER, "not graded"]
    n = len(report.systems)
    left, lines = label_column([s.name for s in report.systems], 12)
    pw, right = 540, 30
    row = max(30, round(12 * LINE_HEIGHT * lines) + 10)
    width = round(left + pw + right)
    body = []
    x, legend_y = left, 8
    for c in cats:  # legend, wrapped onto a second row when it runs out of width
        item_w = 16 + text_width(c, 11) + 16
        if x + item_w > width - right:
            x, legend_y = left, legend_y + 20
        body.append(f'<rect x="{x:.1f}" y="{legend_y}" width="12" height="12" rx="2" fill="{OUTCOME_COLOURS[c]}"/>')
        body.append(_text(x + 16, legend_y + 10, c, size=11))
        x += item_w
    top = legend_y + 30
    height = top + row * n + 20
    for i, s in enumerate(report.systems):
        y = top + i * row
        body.append(_row_label(left - 10, y + row / 2, s.name, left - 20))
        total = sum(s.outcome_counts.get(c, 0) for c in cats) or 1
        x = left
        for c in cats:
            k = s.outcome_counts.get(c, 0)
            if not k:
                continue
            w = pw * k / total
            body.append(f'<rect x="{x:.1f}" y="{y + 5}" width="{w:.1f}" height="{row - 10}" fill="{OUTCOME_COLOURS[c]}">'
                        f'<title>{escape(s.name)}: {c} {k}</title></rect>')
            if w > 26:
                body.append(_text(x + w / 2, y + row / 2 + 4, str(k), anchor="middle", size=11,
                                  fill="#fff" if c in ("Resolved", "Regression", "No-Op") else "#222"))
            x += w
    return _svg(width, height, body, "outcome categories per system")


def _table(header: list[str], rows: list[list[str]], css: str = "") -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    cls = f' class="{css}"' if css else ""
    return f"<table{cls}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def report_html(report: Report, title: str = "issuebench report") -> str:
    template = Template(resources.files("issuebench.analysis").joinpath("templates/report.html")
                        .read_text(encoding="utf-8"))
    cats = [*OUTCOME_ORDER, "not graded"]
    outcome_rows = [[s.name, *[str(s.outcome_counts.get(c, 0)) for c in cats]] for s in report.systems]
    status_rows = [[s.name, ", ".join(f"{k} {v}" for k, v in s.status_counts.items())] for s in report.systems]
    notes = [f"<li><b>{escape(s.name)}</b>: {escape(n)}</li>" for s in report.systems for n in s.notes]
    summary = f"{len(report.systems)} system(s), {len(report.repos)} repositories. {_leader(report)}"
    return template.substitute(
        title=escape(title), version=escape(__version__), summary=summary, method=escape(report.method),
        headline_table=_table(HEADLINE, headline_rows(report)),
        rate_plot=rate_plot(report), cost_plot=cost_plot(report), heatmap=repo_heatmap(report),
        outcome_plot=outcome_plot(report), outcome_table=_table(["system", *cats], outcome_rows),
        status_table=_table(["system", "statuses"], status_rows, css="left"),
        notes=("<ul>" + "".join(notes) + "</ul>") if notes else "<p>None.</p>",
        wider=_wider(report), steps=_steps(report),
    )


def _leader(report: Report) -> str:
    """Who has the highest rate; a tie names everyone at the top, not the first in the list."""
    if not report.systems:
        return ""
    best = report.systems[0]
    top = [s for s in report.systems if abs(s.rate - best.rate) < 1e-12]
    interval = f"(95% CI {_fmt_pct(best.ci_low)} to {_fmt_pct(best.ci_high)})"
    if len(report.systems) == 1:
        return f"Rate: {_fmt_pct(best.rate)} {interval}."
    if len(top) == 1:
        return f"Highest rate: <b>{escape(best.name)}</b>, {_fmt_pct(best.rate)} {interval}."
    if len(top) == len(report.systems):
        return f"All {len(top)} systems tie at {_fmt_pct(best.rate)} ({best.resolved}/{best.total}) {interval}."
    names = ", ".join(f"<b>{escape(s.name)}</b>" for s in top)
    return f"Tied for the highest rate, {_fmt_pct(best.rate)} {interval}: {names}."


def _steps(report: Report) -> str:
    """The agent's steps beside the verdicts: per system, then per instance behind a click (no script)."""
    rows = agent_steps.steps_rows(report.systems)
    if not rows:
        return ""
    per_instance = agent_steps.per_instance_rows(report.systems)
    return ("<section><h2>Agent steps</h2><p class=\"method\">"
            f"{escape(agent_steps.STEPS_LEGEND[0].upper() + agent_steps.STEPS_LEGEND[1:])}.</p>"
            f'<div class="scroll">{_table(agent_steps.STEPS_HEADER, rows)}</div>'
            f"<details><summary>Per instance ({len(per_instance)})</summary>"
            f'<div class="scroll">{_table(agent_steps.INSTANCE_HEADER, per_instance)}</div></details></section>')


def _wider(report: Report) -> str:
    """The stricter rate of an `eval --wider-tests` pass, beside the official one (nothing without a pass)."""
    rows = wider_rows(report)
    if not rows:
        return ""
    return ("<h2>Resolved without breaking wider tests</h2><p class=\"method\">The official rate stays; this one "
            "also leaves out resolved patches that break other tests of the changed code (they are named in the "
            "notes).</p>" + f'<div class="scroll">{_table(WIDER_HEADER, rows)}</div>')
