"""``pypads runs``, ``pypads runs show RUN`` and ``pypads calls``: what the store holds,
as tables.

Both read through :mod:`pypads.results`, which imports MLflow when they run.
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from pypads.cli import CliError
from pypads.cli.common import URI_HELP, add_uri_argument, command_store, full_run_id, table

DESCRIPTIONS = {
    "runs": "List the most recent runs, newest first: short run id, name, experiment, status, start "
            "time and a few metrics (those most runs listed have, system metrics left out). "
            "`pypads runs show RUN` shows one run: status, duration, params, metrics, models, "
            "datasets and the machine it ran on.",
    "calls": "List a run's call database (recorded by the `calls` event or @intercept): how many "
             "calls each function had, how many raised, and how long they took.",
}


def add_runs_arguments(parser: argparse.ArgumentParser) -> None:
    add_uri_argument(parser)
    parser.add_argument("--experiment", metavar="NAME", help="only this experiment's runs")
    parser.add_argument("--max", type=int, default=20, metavar="N", help="at most N runs (default: 20)")
    parser.add_argument("--metrics", metavar="NAMES",
                        help="comma-separated metric names to show (default: up to 3 that most runs have)")


    commands = parser.add_subparsers(dest="runs_command", metavar="show", required=False)
    show = commands.add_parser("show", help="one run's key facts and the machine it ran on",
                               description="Show one run: status, duration, tags, params, metrics, models, "
                                           "datasets, child runs, and the environment from "
                                           "environment/system.json.")
    # SUPPRESS: left unset, `pypads runs --uri X show RUN` keeps the X given before `show`.
    show.add_argument("--uri", help=URI_HELP, default=argparse.SUPPRESS)
    show.add_argument("run_id", metavar="RUN", help="a run id, or its first characters (as `pypads runs` lists them)")


def add_calls_arguments(parser: argparse.ArgumentParser) -> None:
    add_uri_argument(parser)
    parser.add_argument("run_id", metavar="RUN_ID", help="the MLflow run id")


def runs_main(options: argparse.Namespace) -> int:
    import pandas as pd

    from pypads import results

    if getattr(options, "runs_command", None) == "show":
        return show_main(options)
    if options.max < 1:
        raise CliError(f"--max {options.max}: must be at least 1")
    store = command_store(options)
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

    store = command_store(options)
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


# --- pypads runs show RUN ----------------------------------------------------------
SECTIONS = ("system", "cpu", "memory", "disk", "process", "network")


def show_main(options: argparse.Namespace) -> int:
    from pypads import results

    store = command_store(options)
    uri = store.tracking_uri
    try:
        run_id = full_run_id(options.run_id, uri)
        info = results.run_info(run_id, uri=uri)
        params = results.params(run_id, uri=uri)
        metrics = results.metrics(run_id, uri=uri)
        models = results.models(run_id, uri=uri)
        datasets = results.datasets(run_id, uri=uri)
    except results.ResultsError as error:
        raise CliError(str(error)) from None
    try:
        environment: dict[str, Any] | None = results.system(run_id, uri=uri)
        missing = ""
    except results.ResultsError as error:
        environment, missing = None, str(error)
    print(_facts_block(info))
    print()
    _section("params", [[key, value] for key, value in zip(params["key"], params["value"])], ["key", "value"])
    latest = metrics.groupby("key", sort=True).tail(1) if not metrics.empty else metrics
    rows = [[key, _number(float(value)), int(step)] for key, value, step in zip(latest["key"], latest["value"], latest["step"])]
    _section("metrics", rows, ["key", "last value", "step"], right=(1, 2))
    _section("models", [[name, model_id, status.replace("LoggedModelStatus.", ""),
                         "" if source == run_id else source[:8]]
                        for name, model_id, status, source in models.itertuples(index=False)],
             ["name", "model id", "status", "run"])
    _section("datasets", [[name, context or "", digest] for name, context, digest in
                          zip(datasets["name"], datasets["context"], datasets["digest"])], ["name", "context", "digest"])
    print("environment (environment/system.json)")
    if environment is None:
        print(f"  {missing}")
    else:
        print(_environment_block(environment))
    return 0


def _facts_block(info: dict[str, Any]) -> str:
    started, ended = info["start_time"], info["end_time"]
    lines = [
        ("run", f"{info['run_id']}  {info['run_name'] or ''}".rstrip()),
        ("experiment", info["experiment"]),
        ("status", info["status"]),
        ("started", started.strftime("%Y-%m-%d %H:%M:%S") if started else ""),
        ("duration", _duration(info["duration"]) if info["duration"] is not None else "(running)" if not ended else ""),
    ]
    if info["parent_run_id"]:
        lines.append(("parent run", info["parent_run_id"]))
    if info["child_runs"]:
        names = ", ".join(f"{name} ({run_id[:8]})" for run_id, name in info["child_runs"])
        lines.append(("child runs", f"{len(info['child_runs'])}: {names}"))
    tags = {key: value for key, value in sorted(info["tags"].items()) if not key.startswith("mlflow.")}
    git = {key.rpartition(".")[2]: value for key, value in info["tags"].items() if key.startswith("mlflow.source.git.")}
    if git:
        lines.append(("git", ", ".join(f"{key} {value}" for key, value in sorted(git.items()))))
    lines += [(f"tag {key}", value) for key, value in tags.items()]
    width = max(len(label) for label, _ in lines)
    return "\n".join(f"{label.ljust(width)}  {value}".rstrip() for label, value in lines)


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min {rest:02d} s" if hours else f"{minutes} min {rest:02d} s"


def _section(title: str, rows: list[list[Any]], headers: list[str], right: Any = ()) -> None:
    print(f"{title} ({len(rows)})")
    if rows:
        print("\n".join("  " + line for line in table(headers, rows, right=right).splitlines()))
    print()


def _environment_block(environment: dict[str, Any]) -> str:
    """The sections of ``system.json`` as ``label  key value, key value`` lines."""
    units = {"_gb": " GB", "_mb": " MB", "_mhz": " MHz"}

    def shown(key: str, value: Any) -> str:
        for suffix, unit in units.items():
            if key.endswith(suffix):
                return f"{key[: -len(suffix)].replace('_', ' ')} {value}{unit}"
        return f"{key.replace('_', ' ')} {value}"

    lines = []
    for section in [*SECTIONS, *(key for key in environment if key not in SECTIONS and isinstance(environment[key], dict))]:
        values = environment.get(section)
        if isinstance(values, dict) and values:
            lines.append(f"  {section.ljust(8)}  " + ", ".join(shown(key, value) for key, value in values.items()))
    if environment.get("pseudonymized"):
        lines.append("  (hostname, user, ip and mac are pseudonyms: config pseudonymize)")
    return "\n".join(lines) or "  (empty)"
