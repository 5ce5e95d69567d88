"""``pypads runs`` and ``pypads calls``: what the store holds, as tables.

Both read through :mod:`pypads.results`, which imports MLflow when they run.
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from pypads.cli import CliError
from pypads.cli.common import add_uri_argument, store_for, table

DESCRIPTIONS = {
    "runs": "List the most recent runs, newest first: short run id, name, experiment, status, start "
            "time and a few metrics (those most runs listed have, system metrics left out).",
    "calls": "List a run's call database (recorded by the `calls` event or @intercept): how many "
             "calls each function had, how many raised, and how long they took.",
}


def add_runs_arguments(parser: argparse.ArgumentParser) -> None:
    add_uri_argument(parser)
    parser.add_argument("--experiment", metavar="NAME", help="only this experiment's runs")
    parser.add_argument("--max", type=int, default=20, metavar="N", help="at most N runs (default: 20)")
    parser.add_argument("--metrics", metavar="NAMES",
                        help="comma-separated metric names to show (default: up to 3 that most runs have)")


def add_calls_arguments(parser: argparse.ArgumentParser) -> None:
    add_uri_argument(parser)
    parser.add_argument("run_id", metavar="RUN_ID", help="the MLflow run id")


def runs_main(options: argparse.Namespace) -> int:
    import pandas as pd

    from pypads import results

    if options.max < 1:
        raise CliError(f"--max {options.max}: must be at least 1")
    store = store_for(options)
    try:
        found = results.runs(options.experiment, max_results=options.max, uri=store.tracking_uri)
    except results.ResultsError as error:
        raise CliError(str(error)) from None
    if found.empty:
        where = f"experiment {options.experiment!r}" if options.experiment else store.display_uri
        print(f"no runs in {where}")
        return 0
    shown = _metric_names(found, options.metrics)
    rows = []
    for _, run in found.iterrows():
        started = "" if pd.isna(run["start_time"]) else run["start_time"].strftime("%Y-%m-%d %H:%M:%S")
        rows.append([run["run_id"][:8], run["run_name"], run["experiment"], run["status"], started,
                     *(_number(run.get(f"metrics.{name}")) for name in shown)])
    print(table(["run", "name", "experiment", "status", "started", *shown], rows,
                right=range(5, 5 + len(shown))))
    return 0


def _metric_names(found: Any, wanted: str | None) -> list[str]:
    """The metric columns (``found`` is a DataFrame of runs): those asked for, else up
    to 3 that most runs have (not ``system/…``)."""
    columns = [column[len("metrics."):] for column in found.columns if column.startswith("metrics.")]
    if wanted:
        names = [name.strip() for name in wanted.split(",") if name.strip()]
        unknown = [name for name in names if name not in columns]
        if unknown:
            known = ", ".join(sorted(columns)) or "none"
            raise CliError(f"--metrics: no run listed has {', '.join(map(repr, unknown))} (metrics: {known})")
        return names
    counts = Counter({name: int(found[f"metrics.{name}"].notna().sum())
                      for name in columns if not name.startswith("system/")})
    return [name for name, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:3]]


def _number(value: object) -> str:
    if value is None or value != value:  # NaN: the run has no such metric
        return ""
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def calls_main(options: argparse.Namespace) -> int:
    from pypads import results

    store = store_for(options)
    try:
        records = results.calls(options.run_id, uri=store.tracking_uri)
    except results.ResultsError as error:
        raise CliError(str(error)) from None
    if records.empty:
        print(f"run {options.run_id}'s call database holds no calls")
        return 0
    rows = []
    for function, calls in records.groupby("function", sort=True):
        raised = int(calls["raised"].notna().sum())
        total = float(calls["duration"].sum())
        rows.append([function, len(calls), raised, f"{total:.4f}", f"{1000 * total / len(calls):.3f}"])
    print(table(["function", "calls", "raised", "total s", "mean ms"], rows, right=(1, 2, 3, 4)))
    print(f"{len(records)} call(s) of {len(rows)} function(s) in run {options.run_id}")
    return 0
