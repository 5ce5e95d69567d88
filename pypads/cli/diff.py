"""``pypads diff RUN_A RUN_B``: what changed between two runs, and what it did.

The comparison is :func:`pypads.results.diff`; this module lays it out as sections
of rows, which the terminal shows as text tables (only what changed, then one line of
what did not), ``--html`` as a page (:mod:`pypads.cli.diff_page`) and ``--json`` as is.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pypads.cli import CliError
from pypads.cli.common import add_uri_argument, command_store, full_run_id, table
from pypads.cli.diff_page import Section, page

DESCRIPTIONS = {
    "diff": "Compare two runs: params added, removed or changed; datasets whose digest changed, with their "
            "shape and schema; the git commit, branch and uncommitted changes; package versions; mapping "
            "files; and each metric's latest value in both runs with the change (system metrics last). "
            "A run id may be given by its first characters. An unknown run is exit status 2.",
}
ABSENT = "(none)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_uri_argument(parser)
    parser.add_argument("run_a", metavar="RUN_A", help="the run compared from: a run id or its first characters")
    parser.add_argument("run_b", metavar="RUN_B", help="the run compared to")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON, for scripts")
    parser.add_argument("--html", metavar="FILE", help="also write the comparison as a self-contained HTML page")


def main(options: argparse.Namespace) -> int:
    from pypads import results

    uri = command_store(options).tracking_uri
    try:
        run_a, run_b = (full_run_id(given, uri, status=2) for given in (options.run_a, options.run_b))
        found = results.diff(run_a, run_b, uri=uri)
    except results.ResultsError as error:
        raise CliError(str(error), status=2) from None
    shown, summary = sections(found), summaries(found)
    if options.html:
        path = Path(options.html)
        try:
            path.write_text(page(found["runs"], shown, summary), encoding="utf-8")
        except OSError as error:
            raise CliError(f"--html {path}: {error.strerror or error}") from None
    if options.json:
        print(json.dumps(found, indent=2))
    else:
        print(text(found["runs"], shown, summary))
        if options.html:
            print(f"\nwrote {options.html}", file=sys.stderr)
    return 0


def text(runs: dict[str, Any], shown: list[Section], summary: list[str]) -> str:
    """The comparison as the terminal shows it."""
    lines = [f"{side.upper()}  {run['run_id']}  {run['run_name'] or ''}  ({run['experiment']}, {run['status']})"
             for side, run in runs.items()]
    for section in shown:
        lines += ["", section.title]
        if section.rows:
            lines += ["  " + line for line in table(section.headers, section.rows, right=section.right).splitlines()]
        lines += ["  " + note for note in section.notes]
        if section.block:
            lines += ["", *("  " + line for line in section.block.splitlines())]
    return "\n".join([*lines, "", *summary])


def sections(found: dict[str, Any]) -> list[Section]:
    """The sections with something that changed, in reading order; system metrics last."""
    candidates = [_params(found["params"]), _datasets(found["datasets"]), _code(found["code"]),
                  _packages(found["packages"]), _mappings(found["mappings"]),
                  _metrics("metrics", found["metrics"]), _metrics("system metrics", found["system_metrics"])]
    return [section for section in candidates if section.rows or section.notes or section.block]


def summaries(found: dict[str, Any]) -> list[str]:
    """One line of what did not change, in the sections' order, and, if any, one of
    what a run did not record."""
    unchanged, missing = [], []

    def counted(name: str, title: str) -> None:
        if found[name]["unchanged"]:
            unchanged.append(f"{found[name]['unchanged']} {title}")

    counted("params", "params")
    counted("datasets", "datasets")
    code = found["code"]
    git = [name for name in ("commit", "branch", "dirty") if code[name]["a"] is not None or code[name]["b"] is not None]
    unchanged += [f"git {name}" for name in git if not code[name]["changed"]]
    missing += [] if git else ["git (both runs)"]
    patch = code["patch"]
    if git and not patch["changed"] and patch["a"] == patch["b"] != "not recorded":
        unchanged.append("uncommitted changes")
    counted("packages", "packages")
    missing += [f"packages ({side.upper()})" for side in ("a", "b") if not found["packages"]["recorded"][side]]
    mappings = found["mappings"]
    if mappings["a"] is None and mappings["b"] is None:
        missing.append("mapping files (both runs)")
    elif not mappings["changed"]:
        unchanged.append("mapping files")
    counted("metrics", "metrics")
    counted("system_metrics", "system metrics")
    lines = [f"unchanged: {', '.join(unchanged) or 'nothing'}"]
    return lines + ([f"not recorded: {', '.join(missing)}"] if missing else [])


def _params(params: dict[str, Any]) -> Section:
    section = Section(_title("params", params), ["param", "A", "B"])
    section.rows += [[key, values["a"], values["b"]] for key, values in params["changed"].items()]
    section.rows += [[key, ABSENT, value] for key, value in params["added"].items()]
    section.rows += [[key, value, ABSENT] for key, value in params["removed"].items()]
    return section


def _datasets(datasets: dict[str, Any]) -> Section:
    section = Section(_title("datasets", datasets), ["dataset", "what", "A", "B"])
    for key, change in datasets["changed"].items():
        section.rows.append([key, "digest", change["digest"]["a"], change["digest"]["b"]])
        section.rows += [["", name, _shown(values["a"]), _shown(values["b"])] for name, values in change["profile"].items()]
        schema = change["schema"]
        section.rows += [["", f"column {name}", values["a"], values["b"]] for name, values in schema["changed"].items()]
        section.rows += [["", f"column {name}", ABSENT, kind] for name, kind in schema["added"].items()]
        section.rows += [["", f"column {name}", kind, ABSENT] for name, kind in schema["removed"].items()]
    section.rows += [[key, "digest", ABSENT, digest] for key, digest in datasets["added"].items()]
    section.rows += [[key, "digest", digest, ABSENT] for key, digest in datasets["removed"].items()]
    return section


def _code(code: dict[str, Any]) -> Section:
    section = Section("code", ["git", "A", "B"])
    section.rows += [[name, _shown(code[name]["a"]), _shown(code[name]["b"])]
                     for name in ("commit", "branch", "dirty") if code[name]["changed"]]
    patch = code["patch"]
    if patch["changed"] or patch["a"] != patch["b"]:
        section.rows.append(["uncommitted changes", patch["a"], patch["b"]])
    if patch["changed"]:
        section.block = patch["diff"] + ("\n… (cut: the patches differ in more lines)" if patch["cut"] else "")
    return section


def _packages(packages: dict[str, Any]) -> Section:
    section = Section(_title("packages", packages), ["package", "A", "B", ""])
    section.rows += [[name, values["a"], values["b"], values["direction"]] for name, values in packages["changed"].items()]
    section.rows += [[name, ABSENT, version, "added"] for name, version in packages["added"].items()]
    section.rows += [[name, version, ABSENT, "removed"] for name, version in packages["removed"].items()]
    recorded = packages["recorded"]
    section.notes += [f"run {side.upper()} did not record its packages (environment/requirements.txt), "
                      "not compared" for side in ("a", "b") if not recorded[side]]
    return section


def _mappings(mappings: dict[str, Any]) -> Section:
    section = Section("mapping files", ["run", "pypads.mappings"])
    if mappings["changed"]:
        section.rows += [[side.upper(), _shown(mappings[side])] for side in ("a", "b")]
    return section


def _metrics(title: str, metrics: dict[str, Any]) -> Section:
    counts = {"changed": len(metrics["changed"]), "added": len(metrics["only_b"]), "removed": len(metrics["only_a"])}
    section = Section(_title(title, counts), ["metric", "A", "B", "delta", "relative"], right=(1, 2, 3, 4))
    section.rows += [[key, _number(values["a"]), _number(values["b"]), _number(values["delta"], sign=True),
                      "" if values["relative"] is None else f"{values['relative']:+.2%}"]
                     for key, values in metrics["changed"].items()]
    section.rows += [[key, _number(value), ABSENT, "", ""] for key, value in metrics["only_a"].items()]
    section.rows += [[key, ABSENT, _number(value), "", ""] for key, value in metrics["only_b"].items()]
    return section


def _title(name: str, found: dict[str, Any]) -> str:
    counts = [(len(found[kind]) if not isinstance(found[kind], int) else found[kind], kind)
              for kind in ("changed", "added", "removed")]
    told = ", ".join(f"{count} {kind}" for count, kind in counts if count)
    return f"{name}: {told}" if told else name


def _shown(value: Any) -> str:
    return ABSENT if value is None else str(value)


def _number(value: float, sign: bool = False) -> str:
    """A metric's value with six significant digits (``+`` before a delta's)."""
    return f"{value:+.6g}" if sign else f"{value:.6g}"
