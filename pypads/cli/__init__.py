"""The ``pypads`` command: track a script, open the MLflow UI, check mapping files,
list runs and calls, compare two runs, and upload journals left behind.

Each subcommand lives in a module of its own, imported only when it runs: ``pypads
run`` must not import MLflow before ``PyPads()`` starts (the run would then be opened
on the script's thread), and ``pypads --help`` should answer at once.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# name: (module, one-line help). Each module has ``add_arguments(parser)`` and
# ``main(options) -> int``.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("pypads.cli.run", "track a script with no code change, as if it began with PyPads()"),
    "ui": ("pypads.cli.ui", "open the MLflow UI on the store runs go to"),
    "runs": ("pypads.cli.listing", "list recent runs with a few of their metrics"),
    "calls": ("pypads.cli.listing", "list a run's call database: calls per function"),
    "mappings": ("pypads.cli.mappings", "validate mapping files and show what they would patch"),
    "sync": ("pypads.cli.sync", "upload every journal that a script left behind"),
    "diff": ("pypads.cli.diff", "what changed between two runs: params, data, code, packages, metrics"),
}


class CliError(Exception):
    """A problem with what the user asked for: printed as one line, exit status
    ``status`` (1 unless the command documents another)."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


def build_parser() -> argparse.ArgumentParser:
    """The parser of every subcommand (each one's arguments come from its module)."""
    parser = argparse.ArgumentParser(
        prog="pypads",
        description="Track scikit-learn experiments into MLflow, and look at what was tracked.",
    )
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module_name, summary) in COMMANDS.items():
        module = importlib.import_module(module_name)
        adder = getattr(module, f"add_{name}_arguments", None) or module.add_arguments
        sub = subcommands.add_parser(name, help=summary, description=module_description(module, name, summary))
        adder(sub)
    return parser


def module_description(module: object, name: str, summary: str) -> str:
    """A subcommand's ``--help`` text: the module's ``DESCRIPTIONS[name]`` if any."""
    descriptions = getattr(module, "DESCRIPTIONS", {})
    return descriptions.get(name, summary[0].upper() + summary[1:] + ".")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pypads`` console script; returns the exit status."""
    parser = build_parser()
    options = parser.parse_args(argv)
    module = importlib.import_module(COMMANDS[options.command][0])
    handler = getattr(module, f"{options.command}_main", None) or module.main
    try:
        return handler(options)
    except CliError as error:
        print(f"pypads {options.command}: error: {error}", file=sys.stderr)
        return error.status
