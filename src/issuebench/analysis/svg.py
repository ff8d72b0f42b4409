"""The pieces the report's SVG plots are made of: the svg element, labels measured and wrapped
onto lines (never cut), the page's accent colour and font."""

from __future__ import annotations

import re
from html import escape

ACCENT = "#0072B2"
FONT = "font-family:inherit"


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def svg(width: int, height: int, body: list[str], label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" '
            f'role="img" aria-label="{escape(label)}" style="max-width:{width}px">' + "".join(body) + "</svg>")


def text(x: float, y: float, s: str | list[str], *, anchor: str = "start", size: int = 12, fill: str = "#333",
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
