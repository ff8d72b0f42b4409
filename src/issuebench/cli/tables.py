"""Tables that never cut an instance id or a system name, on a terminal or in a CI log.

rich fits a table to the console's width and ends what does not fit with "…"; off a terminal
(CI logs, `| tee`) that width is 80 columns, and `sympy__sympy-241…` was all a log kept of an id.
Here nothing is cut: a column whose cells are single words (ids, names, statuses, counts) is
printed whole, off a terminal by widening the table to what they need (a log has no right edge),
on a terminal by folding the rare word that is wider than the screen onto the next line. Prose
columns wrap at spaces.
"""

from __future__ import annotations

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

_NO_EDGE = 100_000  # wide enough to measure any table at its natural width
_PROSE_ROOM = 40    # columns beyond the whole words, so that a reason is not one word a line


def _plain(cell: object) -> str:
    if isinstance(cell, Text):
        return cell.plain
    if isinstance(cell, str):
        return Text.from_markup(cell).plain
    return ""


def _single_words(column) -> bool:  # type: ignore[no-untyped-def]
    cells = [_plain(c) for c in column.cells]
    return bool(cells) and all(len(c.split()) <= 1 for c in cells)


def whole_words(table: Table, *, terminal: bool) -> Table:
    """The table, changed in place so that no cell is cut (see the module's docstring)."""
    for column in table.columns:
        column.overflow = "fold"  # never "…": a word wider than its column goes on the next line
        if not terminal and _single_words(column):
            column.no_wrap = True
    return table


def print_table(console: Console, table: Table) -> None:
    whole_words(table, terminal=console.is_terminal)
    if console.is_terminal:
        console.print(table)
        return
    natural = Measurement.get(console, console.options.update(max_width=_NO_EDGE), table)
    if natural.minimum <= console.width:
        console.print(table)
        return
    # The words whole, and some room besides for the prose columns to wrap in.
    needed = min(natural.maximum, natural.minimum + _PROSE_ROOM)
    # A console of the needed width for this table alone, writing where this one writes.
    wide = Console(file=console.file, width=needed, color_system=console.color_system, no_color=console.no_color,
                   highlight=False)
    wide.print(table)
