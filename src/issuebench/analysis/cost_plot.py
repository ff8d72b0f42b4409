"""The cost plot of the HTML report: mean cost per task against resolved rate, the Pareto frontier
as a step line, and each point's label placed where it covers no point or other label."""

from __future__ import annotations

import itertools
import math
from html import escape

from issuebench.analysis.report import Report, SystemSummary
from issuebench.analysis.svg import ACCENT, FONT, LINE_HEIGHT, pct, svg, text, text_width, wrap_label


def cost_plot(report: Report) -> str:
    """Mean cost per task (x) against rate (y); the Pareto frontier joined by a step line.
    Phases: the scales, the grid and axes, the frontier, the points with their labels."""
    priced = [s for s in report.systems if s.mean_cost_per_task is not None]
    if not priced:
        return svg(760, 80, [text(380, 45, "no cost data: pass --predictions with cost or usage fields",
                                    anchor="middle", fill="#888")], "no cost data")
    frame = _CostFrame(priced)
    body = [*_cost_axes(frame), *_frontier_line(frame, priced), *_cost_points(frame, priced)]
    body.append(text(frame.left + frame.pw - 4, frame.top + 12, "filled: on the Pareto frontier", anchor="end",
                      size=11, fill="#666"))
    return svg(frame.width, frame.height, body, "cost per task against resolved rate, with the Pareto frontier")


class _CostFrame:
    """The cost plot's page, plot area and scales: cost in five round steps, rate in tenths."""

    width, height, left, top = 760, 380, 70, 20
    pw, ph = width - left - 30, height - top - 50

    def __init__(self, priced: list[SystemSummary]) -> None:
        self.cost_step = _nice_step(max(s.mean_cost_per_task or 0.0 for s in priced) * 1.05 / 5)
        self.max_rate = min(1.0, math.ceil(max(s.ci_high for s in priced) * 10) / 10) or 1.0

    def px(self, cost: float) -> float:
        return self.left + self.pw * cost / (self.cost_step * 5)

    def py(self, rate: float) -> float:
        return self.top + self.ph * (1 - rate / self.max_rate)


def _cost_axes(f: _CostFrame) -> list[str]:
    """The rate grid and ticks, the cost ticks, both axes and their titles."""
    body = []
    for k in range(round(f.max_rate * 10) + 1):
        y = f.py(k / 10)
        body.append(f'<line x1="{f.left}" y1="{y:.1f}" x2="{f.left + f.pw}" y2="{y:.1f}" stroke="#eee"/>')
        body.append(text(f.left - 8, y + 4, f"{10 * k}%", anchor="end", size=11, fill="#666"))
    for k in range(6):
        cost = f.cost_step * k
        body.append(text(f.px(cost), f.top + f.ph + 18, f"{cost:.4g}", anchor="middle", size=11, fill="#666"))
    body.append(f'<line x1="{f.left}" y1="{f.top + f.ph}" x2="{f.left + f.pw}" y2="{f.top + f.ph}" stroke="#999"/>')
    body.append(f'<line x1="{f.left}" y1="{f.top}" x2="{f.left}" y2="{f.top + f.ph}" stroke="#999"/>')
    body.append(text(f.left + f.pw / 2, f.height - 8, "mean cost per task", anchor="middle", size=12, fill="#444"))
    body.append(f'<text transform="translate(16,{f.top + f.ph / 2}) rotate(-90)" text-anchor="middle" '
                f'font-size="12" fill="#444" style="{FONT}">resolved rate</text>')
    return body


def _frontier_line(f: _CostFrame, priced: list[SystemSummary]) -> list[str]:
    """The Pareto frontier as a dashed step line, when it has more than one system."""
    frontier = sorted((s for s in priced if s.pareto), key=lambda s: s.mean_cost_per_task or 0.0)
    if len(frontier) <= 1:
        return []
    pts = []
    for a, b in itertools.pairwise(frontier):
        pts += [f"{f.px(a.mean_cost_per_task or 0):.1f},{f.py(a.rate):.1f}",
                f"{f.px(b.mean_cost_per_task or 0):.1f},{f.py(a.rate):.1f}"]
    last = frontier[-1]
    pts.append(f"{f.px(last.mean_cost_per_task or 0):.1f},{f.py(last.rate):.1f}")
    return [f'<polyline points="{" ".join(pts)}" fill="none" stroke="{ACCENT}" stroke-width="2" '
            'stroke-dasharray="5 4"/>']


def _cost_points(f: _CostFrame, priced: list[SystemSummary]) -> list[str]:
    """Each system's interval and point, then its label, placed where it covers no point or label."""
    taken: list[Box] = [(f.px(s.mean_cost_per_task or 0.0) - 8, f.py(s.rate) - 8,
                         f.px(s.mean_cost_per_task or 0.0) + 8, f.py(s.rate) + 8) for s in priced]
    body = []
    for s in priced:
        x, y = f.px(s.mean_cost_per_task or 0.0), f.py(s.rate)
        body.append(f'<line x1="{x:.1f}" y1="{f.py(s.ci_low):.1f}" x2="{x:.1f}" y2="{f.py(s.ci_high):.1f}" '
                    'stroke="#bbb" stroke-width="1.5"/>')
        fill = ACCENT if s.pareto else "#fff"
        body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="6" fill="{fill}" stroke="{ACCENT}" stroke-width="2">'
                    f'<title>{escape(s.name)}: {pct(s.rate)}, {s.mean_cost_per_task:.4f} per task</title></circle>')
        body.append(_point_label(x, y, s.name, (f.width, f.height), taken))
    return body


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
                label = text(x + (10 if anchor == "start" else -10), first, lines, anchor=anchor, size=size,
                              cls="point-label")
                fallback = fallback or (label, box)
                if not any(_overlap(box, other) for other in taken):
                    taken.append(box)
                    return label
    label, box = fallback or (text(x + 10, y - 8, wrap_label(name, width / 2, size), size=size,
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
