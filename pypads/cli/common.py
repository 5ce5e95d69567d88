"""What several subcommands share: the ``--uri`` option, run ids given by their first
characters, and plain-text tables."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from pypads.cli import CliError
from pypads.to_mlflow import Store, resolve_store

URI_HELP = ("MLflow tracking URI or store folder (default: $MLFLOW_TRACKING_URI, then $MLFLOW_PATH, "
            "then the store in $PYPADS_HOME or ~/.pypads)")


def add_uri_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--uri", help=URI_HELP)


def command_store(options: argparse.Namespace) -> Store:
    """The store the command reads: the one ``PyPads(uri=options.uri)`` would track into."""
    return resolve_store(getattr(options, "uri", None))


def full_run_id(given: str, uri: str, status: int = 1) -> str:
    """``given``, or the one run whose id starts with it (as ``pypads runs`` shows ids);
    else a :class:`CliError` with exit status ``status``. A full id is checked by the
    command that reads the run."""
    from pypads import results

    if len(given) >= 32:
        return given
    found = results.runs(max_results=5000, uri=uri)
    matches = [run_id for run_id in found["run_id"] if run_id.startswith(given)] if not found.empty else []
    if not matches:
        raise CliError(f"no run whose id starts with {given!r} in {resolve_store(uri).display_uri}", status)
    if len(matches) > 1:
        raise CliError(f"{given!r} is the start of {len(matches)} run ids ({', '.join(matches[:5])}…): give more of it",
                       status)
    return str(matches[0])


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], right: Sequence[int] = ()) -> str:
    """Rows as aligned text columns under a header line; columns in ``right`` (numbers)
    are aligned to the right."""
    cells = [[str(header) for header in headers]]
    cells += [["" if cell is None else str(cell) for cell in row] for row in rows]
    widths = [max(len(row[column]) for row in cells) for column in range(len(headers))]

    def line(row: list[str]) -> str:
        parts = [cell.rjust(width) if column in right else cell.ljust(width)
                 for column, (cell, width) in enumerate(zip(row, widths))]
        return "  ".join(parts).rstrip()

    rule = ["-" * width for width in widths]
    return "\n".join([line(cells[0]), line(rule), *(line(row) for row in cells[1:])])
