"""A report in each text format. Here, not in report.py: the HTML page is built from the report,
so report.py cannot also reach for html.py without the two importing each other."""

from __future__ import annotations

from issuebench.analysis.html import report_html
from issuebench.analysis.report import Report, to_csv, to_json, to_markdown

RENDERERS = {"json": to_json, "md": to_markdown, "csv": to_csv, "html": report_html}


def render(report: Report, fmt: str) -> str:
    """Text formats only; 'table' is printed by the CLI with rich."""
    try:
        return RENDERERS[fmt](report)
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}") from None
