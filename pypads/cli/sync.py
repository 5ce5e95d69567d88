"""``pypads sync``: upload the journals that scripts left behind, now.

A journal is left behind when its script and uploader are both gone before all of it
reached MLflow (a SIGKILL'd uploader thread, a store that did not answer). The next
``PyPads()`` uploads it (:func:`pypads.to_mlflow.uploader.recover`); this does the same by hand,
one journal at a time with progress on stderr: it claims each journal (so that a
``PyPads()`` starting meanwhile does not upload it too), uploads it and ends its run
with the status its script recorded, or KILLED.
"""

from __future__ import annotations

import argparse
import functools
import sys
from dataclasses import dataclass, field

from pypads.to_mlflow import PATIENCE, JournalReader, journal_root, left_behind

DESCRIPTIONS = {
    "sync": "Upload every journal that scripts left behind in pypads' home ($PYPADS_HOME or ~/.pypads) "
            "into its run, and end those runs. Each journal names its own store. Exit status 0 when "
            "nothing failed; a journal that failed stays for a later try.",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``pypads sync`` takes no options: every journal names its own store."""


@dataclass
class SyncReport:
    """What a sync did, journal by journal."""

    recovered: list[str] = field(default_factory=list)  # run ids
    busy: list[str] = field(default_factory=list)  # journals another process claimed first
    failed: dict[str, list[str]] = field(default_factory=dict)  # journal folder -> warnings


def main(options: argparse.Namespace) -> int:
    journals = left_behind()
    if not journals:
        root = journal_root()
        at_work = len([folder for folder in root.iterdir() if folder.is_dir()]) if root.is_dir() else 0
        print(f"nothing to sync: no journal left behind in {root}" + (
            f"; {at_work} still have their script or uploader at work on them (an uploader goes on trying "
            f"a server that does not answer for {PATIENCE / 60:g} minutes)" if at_work else ""))
        return 0
    report = sync(journals)
    print(summary(report))
    for folder, problems in report.failed.items():
        for problem in problems or ["it did not reach MLflow"]:
            print(f"  {folder}: {problem}", file=sys.stderr)
    return 1 if report.failed else 0


def sync(journals: list[JournalReader]) -> SyncReport:
    """Upload ``journals``, saying ``[n/m]`` on stderr for each."""
    from pypads.to_mlflow import Uploader

    report = SyncReport()
    total = len(journals)
    for number, journal in enumerate(journals, 1):
        prefix = f"[{number}/{total}] {journal.folder.name}"
        claimed = journal.claim()
        if claimed is None:
            report.busy.append(str(journal.folder))
            _progress(f"{prefix}: another process is uploading it")
            continue
        problems: list[str] = []
        meta = claimed.meta()
        _progress(f"{prefix}: uploading run {meta.get('run_id') or '(not opened yet)'} "
                  f"of experiment {meta.get('experiment')!r} …")
        uploader = Uploader(claimed.folder, warn=functools.partial(_note_problem, problems))
        status = claimed.status() or meta.get("status") or "KILLED"
        try:
            done = uploader.finish(status, only_if_running=True)
        except Exception as error:  # noqa: BLE001 - one journal's trouble must not stop the others
            done, problems = False, [*problems, f"{type(error).__name__}: {error}"]
        if done:
            report.recovered.append(uploader.run_id or "")
            _progress(f"{prefix}: run {uploader.run_id} uploaded, ended {status} unless it had ended already")
        else:
            report.failed[str(claimed.folder)] = problems
            _progress(f"{prefix}: failed, kept for a later sync")
    return report


def summary(report: SyncReport) -> str:
    """One line: how many runs were recovered, left to another process, failed."""
    parts = [f"recovered {len(report.recovered)} run(s)"]
    if report.recovered:
        parts[0] += f" ({', '.join(report.recovered)})"
    parts.append(f"{len(report.busy)} left to another process uploading them")
    parts.append(f"{len(report.failed)} failed (kept in their journals)")
    return "; ".join(parts)


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _note_problem(problems: list[str], _key: str, message: str) -> None:
    problems.append(message)
