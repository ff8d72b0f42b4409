"""One self-contained HTML page for a report: inline CSS and hand-made SVG plots, no script, no network.

Plots: resolved rate with its interval, cost against rate with the Pareto frontier, a per-repository
heat map, and stacked outcome categories. Every number on a plot is also in a table below it.
"""

from __future__ import annotations

from html import escape
from importlib import resources
from string import Template

from issuebench import __version__
from issuebench.analysis import steps as agent_steps
from issuebench.analysis.cost_plot import cost_plot
from issuebench.analysis.outcomes import OUTCOME_ORDER
from issuebench.analysis.report import HEADLINE, WIDER_HEADER, Report, headline_rows, wider_rows
from issuebench.analysis.svg import ACCENT, LINE_HEIGHT, label_column, pct, svg, text, text_width, wrap_label

# Colour-blind-safe palette (Okabe-Ito) for the outcome categories, plus grey for "not graded".
OUTCOME_COLOURS = {
    "Resolved": "#009E73", "Breaking Resolved": "#56B4E9", "Partially Resolved": "#F0E442",
    "Work in Progress": "#E69F00", "No-Op": "#999999", "Regression": "#D55E00", "not graded": "#DDDDDD",
}


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
        body.append(text(x, top + row * n + 18, f"{tick}%", anchor="middle", size=11, fill="#666"))
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
        body.append(text(hi + 8, mid + 4, f"{pct(s.rate)}  ({s.resolved}/{s.total})", size=11, fill="#222"))
    body.append(text(left, 16, "resolved rate, whiskers: 95% Wilson interval", size=11, fill="#666"))
    return svg(width, height, body, "resolved rate per system with 95% intervals")


def _row_label(x: float, mid: float, name: str, room: float, size: int = 12) -> str:
    """A row's name, right-aligned at x and centred on the row, on as many lines as `room` needs."""
    lines = wrap_label(name, room, size)
    first = mid + 4 - (len(lines) - 1) * LINE_HEIGHT * size / 2
    return text(x, first, lines, anchor="end", size=size, cls="row-label")


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
        body.append(text(left + cell_w * j + cell_w / 2, first, lines, anchor="middle", size=11, weight="bold",
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
                body.append(text(x + cell_w / 2, y + cell_h / 2 + 4, "-", anchor="middle", fill="#aaa"))
                continue
            body.append(f'<rect x="{x + 1}" y="{y + 1}" width="{cell_w - 2}" height="{cell_h - 2}" rx="2" '
                        f'fill="{_heat_colour(rr.rate)}"><title>{escape(repo)} / {escape(s.name)}: '
                        f'{rr.resolved}/{rr.total}</title></rect>')
            body.append(text(x + cell_w / 2, y + cell_h / 2 + 4, f"{pct(rr.rate)} ({rr.resolved}/{rr.total})",
                              anchor="middle", size=11, fill="#fff" if rr.rate > 0.55 else "#222"))
    return svg(width, height, body, "resolved rate per repository and system")


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
        body.append(text(x + 16, legend_y + 10, c, size=11))
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
                body.append(text(x + w / 2, y + row / 2 + 4, str(k), anchor="middle", size=11,
                                  fill="#fff" if c in ("Resolved", "Regression", "No-Op") else "#222"))
            x += w
    return svg(width, height, body, "outcome categories per system")


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
    interval = f"(95% CI {pct(best.ci_low)} to {pct(best.ci_high)})"
    if len(report.systems) == 1:
        return f"Rate: {pct(best.rate)} {interval}."
    if len(top) == 1:
        return f"Highest rate: <b>{escape(best.name)}</b>, {pct(best.rate)} {interval}."
    if len(top) == len(report.systems):
        return f"All {len(top)} systems tie at {pct(best.rate)} ({best.resolved}/{best.total}) {interval}."
    names = ", ".join(f"<b>{escape(s.name)}</b>" for s in top)
    return f"Tied for the highest rate, {pct(best.rate)} {interval}: {names}."


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
