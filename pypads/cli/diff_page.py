"""The sections of ``pypads diff``, and ``--html FILE``: the comparison as one self-contained HTML page (its
style inline, nothing fetched), to attach to a review or open in a browser."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from typing import Any

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.6em; }
table { border-collapse: collapse; } th, td { padding: 0.2em 0.8em; border-bottom: 1px solid #ddd; text-align: left; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; }
.added { color: #176117; } .removed { color: #9b1c1c; } .summary { color: #555; }
"""


@dataclass
class Section:
    """One part of the comparison as a table (and perhaps notes and a block of text)."""

    title: str
    headers: list[str]
    rows: list[list[str]] = field(default_factory=list)
    right: tuple[int, ...] = ()
    notes: list[str] = field(default_factory=list)
    block: str = ""


def page(runs: dict[str, Any], sections: list[Section], summary: list[str]) -> str:
    """The HTML page: the two runs, a table per section that changed, the summary lines."""
    title = f"pypads diff {runs['a']['run_id'][:8]} → {runs['b']['run_id'][:8]}"
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>",
             f"<style>{STYLE}</style></head><body>", f"<h1>{escape(title)}</h1>", "<table>"]
    for side, run in runs.items():
        parts.append(f"<tr><th>{side.upper()}</th><td>{escape(run['run_id'])}</td><td>{escape(run['run_name'] or '')}</td>"
                     f"<td>{escape(str(run['experiment']))}</td><td>{escape(run['status'])}</td></tr>")
    parts.append("</table>")
    for section in sections:
        parts.append(f"<h2>{escape(section.title)}</h2>")
        if section.rows:
            parts.append(_table(section))
        parts += [f"<p>{escape(note)}</p>" for note in section.notes]
        if section.block:
            parts.append(f"<pre>{_patch_lines(section.block)}</pre>")
    parts += [f"<p class=\"summary\">{escape(line)}</p>" for line in summary]
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _table(section: Section) -> str:
    head = "".join(f"<th>{escape(header)}</th>" for header in section.headers)
    rows = []
    for row in section.rows:
        cells = "".join(f"<td class=\"number\">{escape(str(cell))}</td>" if column in section.right
                        else f"<td>{escape(str(cell))}</td>" for column, cell in enumerate(row))
        rows.append(f"<tr>{cells}</tr>")
    return f"<table><tr>{head}</tr>\n" + "\n".join(rows) + "\n</table>"


def _patch_lines(block: str) -> str:
    """A unified diff with its added and removed lines coloured."""
    shown = []
    for line in block.splitlines():
        kind = "added" if line.startswith("+") and not line.startswith("+++") else \
            "removed" if line.startswith("-") and not line.startswith("---") else ""
        shown.append(f"<span class=\"{kind}\">{escape(line)}</span>" if kind else escape(line))
    return "\n".join(shown)
