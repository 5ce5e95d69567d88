"""The gallery benchmark: scikit-learn scripts of our own, each run untracked and tracked.

    .venv/bin/python benchmarks/gallery/run.py                 # all scripts (about 15 minutes)
    .venv/bin/python benchmarks/gallery/run.py --quick         # a handful, one repetition
    .venv/bin/python benchmarks/gallery/run.py --only cv_score_models --only search_grid_svc
    .venv/bin/python benchmarks/gallery/run.py --commit HEAD   # pypads as committed, not the working tree

Each script in ``scripts/`` is plain scikit-learn (no pypads in it). Untracked it runs as
``python script.py``; tracked, as the same script run by runpy after
``from pypads import PyPads; PyPads()``, so its line numbers are its own. The tracked
runs share one ``PYPADS_HOME`` and its store (a SQLite store whose tables were created
beforehand), as a user's runs share ``~/.pypads``: what a home does once (checking the
mapping files against their schema, the uploader's first opening of the store) is paid
by the first script, as by a user's first run. ``--fresh-homes`` gives every tracked run
a home and store of its own instead: each then pays those as a first run. After the
script's process exits, the runner waits for its runs to end, then counts the files and
bytes its first tracked run left under the store's artifact folder (its experiment,
named by the script: the run, its child runs and its logged models): bytes of saved
MLflow models (folders holding an ``MLmodel`` file) apart from the rest. Wall time is the
script process' own, from start to exit (so it includes the wait at the end of the run),
as the median of alternating untracked/tracked repetitions. This is a benchmark, not a
test: nothing here asserts a budget.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from report import Outcome, describe, summary

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

SCRIPTS = Path(__file__).resolve().parent / "scripts"
QUICK = ("classify_iris_tree", "pipeline_column_transformer", "search_grid_pipeline", "cv_score_models",
         "partial_fit_sgd_classifier")
SETTLE_TIMEOUT = 180.0

# Tracked: the same file, run by runpy after PyPads(); argv[0] and path[0] as `python script.py` sets them.
LAUNCHER = ("import runpy, sys\n"
            "sys.argv[0] = {path!r}\n"
            "sys.path[0] = {folder!r}\n"
            "from pypads import PyPads\n"
            "PyPads()\n"
            "runpy.run_path({path!r}, run_name='__main__')\n")


REPOSITORY = Path(__file__).resolve().parents[2]
# Set by --commit: a folder holding pypads/ and mappings/ of that commit, first on the scripts' path.
SNAPSHOT: list[Path] = []


def environment(home: Path | None) -> dict[str, str]:
    """The caller's environment without any MLflow target, and with pypads' home in ``home``."""
    env = {key: value for key, value in os.environ.items()
           if key not in {"MLFLOW_TRACKING_URI", "MLFLOW_PATH", "MLFLOW_RUN_ID", "PYPADS_HOME"}}
    env["MLFLOW_DISABLE_TELEMETRY"] = "true"
    if SNAPSHOT:
        env["PYTHONPATH"] = os.pathsep.join([str(SNAPSHOT[0]), *filter(None, [env.get("PYTHONPATH")])])
    if home is not None:
        env["PYPADS_HOME"] = str(home)
    return env


def timed(command: list[str], cwd: Path, env: dict[str, str], log: Path) -> float:
    """Seconds from the process' start to its exit; raises with its stderr if it failed."""
    with open(log, "w") as errors:
        started = time.perf_counter()
        result = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=errors)
        elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise RuntimeError(f"exit {result.returncode}: " + log.read_text()[-2000:])
    return elapsed


def tracked_command(script: Path) -> list[str]:
    return [sys.executable, "-c", LAUNCHER.format(path=str(script), folder=str(script.parent))]


def settle(home: Path, experiment: str) -> tuple[int, str, list[str]]:
    """Wait until the runs of the store's ``experiment`` have all ended and have their
    pictures: their count, statuses and failure tags."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{home / 'mlflow.db'}")
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while True:
        found = client.get_experiment_by_name(experiment)
        runs = client.search_runs([found.experiment_id], max_results=5000) if found is not None else []
        drawing = list((home / "journal").glob("*/ended"))  # its uploader draws the pictures after the script
        if (runs and not drawing and all(run.info.status != "RUNNING" for run in runs)) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    statuses = Counter(run.info.status for run in runs)
    failures = sorted({key for run in runs for key in run.data.tags if key.startswith("pypads.failure.")})
    return len(runs), ", ".join(f"{count} {status}" for status, count in sorted(statuses.items())), failures


def pattern(relative: Path, model: bool) -> str:
    """A file's kind: its path in the run with run ids, model ids and call numbers as ``*``
    (``calls/*/input/X.txt``), so that a thousand per-call files read as one line."""
    parts = list(relative.parts)
    if model:
        return "model: " + ("MLmodel folder/" + parts[-1])
    # <experiment>/<run id>/artifacts/<path>
    rest = parts[3:] if len(parts) > 3 and parts[2] == "artifacts" else parts[1:]
    return "/".join("*" if re.match(r"^\d+(_|$)", part) else re.sub(r"\d+", "N", part) for part in rest)


def count(home: Path, outcome: Outcome, experiment: str) -> None:
    """Files and bytes under the artifact folder of the store's ``experiment``, models
    apart from the rest."""
    root = home / "artifacts"
    if not (root / experiment).exists():
        return
    files = [path for path in (root / experiment).rglob("*") if path.is_file()]
    model_folders = {path.parent for path in files if path.name == "MLmodel"}
    for path in files:
        size = path.stat().st_size
        model = any(parent in model_folders for parent in path.parents)
        if model:
            outcome.model_files += 1
            outcome.model_bytes += size
        else:
            outcome.other_bytes += size
        kind = pattern(path.relative_to(root), model)
        outcome.patterns[kind] += 1
        outcome.pattern_bytes[kind] += size
    outcome.files = len(files)


def measure(script: Path, root: Path, template: Path, repeats: int, keep: bool = False,
            shared_home: Path | None = None) -> Outcome:
    """Alternating untracked and tracked runs of one script; artifacts of the first tracked
    one. Tracked runs go to ``shared_home``, or each to a home of its own."""
    outcome = Outcome(script.stem)
    work = root / "cwd"  # not a git repository: IGit logs nothing, as for a script outside one
    work.mkdir(exist_ok=True)
    log = root / f"{script.stem}.stderr"
    try:
        for repeat in range(repeats):
            outcome.untracked.append(timed([sys.executable, str(script)], work, environment(None), log))
            home = shared_home or root / f"{script.stem}-{repeat}"
            if shared_home is None:
                home.mkdir()
                shutil.copyfile(template, home / "mlflow.db")
            outcome.tracked.append(timed(tracked_command(script), work, environment(home), log))
            if repeat == 0:
                outcome.runs, outcome.statuses, outcome.failures = settle(home, script.stem)
                count(home, outcome, script.stem)
            else:
                settle(home, script.stem)
            if shared_home is None and not (keep and repeat == 0):  # --keep: the first tracked run's store
                shutil.rmtree(home, ignore_errors=True)
    except RuntimeError as error:
        outcome.error = str(error)
    return outcome


def chosen_scripts(options: argparse.Namespace) -> list[Path]:
    scripts = sorted(SCRIPTS.glob("*.py"))
    names = options.only or (QUICK if options.quick else None)
    if names is None:
        return scripts
    wanted = {Path(name).stem for name in names}
    unknown = wanted - {script.stem for script in scripts}
    if unknown:
        raise SystemExit(f"no such script: {', '.join(sorted(unknown))} (see {SCRIPTS})")
    return [script for script in scripts if script.stem in wanted]


def make_template(folder: Path) -> Path:
    """A SQLite store with MLflow's tables: creating them takes seconds, copying it does not."""
    from mlflow.tracking import MlflowClient

    logging.getLogger("mlflow").setLevel(logging.WARNING)  # its notes on creating tables, not ours to print
    database = folder / "template.db"
    MlflowClient(f"sqlite:///{database}").search_experiments()
    return database


def git(*arguments: str) -> str:
    return subprocess.run(["git", *arguments], cwd=REPOSITORY, capture_output=True, text=True, check=True).stdout.strip()


def pypads_under_test(commit: str | None, root: Path) -> str:
    """Which pypads the scripts run: the working tree (other sessions may be editing it), or
    ``commit`` exported into ``root`` and put first on the scripts' path."""
    if commit is None:
        dirty = git("status", "--porcelain", "--", "pypads", "mappings")
        byte_compile(REPOSITORY / "pypads")
        return f"pypads of the working tree at {git('rev-parse', '--short', 'HEAD')}" + (
            " with uncommitted changes in pypads/ or mappings/" if dirty else "")
    snapshot = root / "pypads-snapshot"
    snapshot.mkdir()
    archive = subprocess.run(["git", "archive", commit, "pypads", "mappings"], cwd=REPOSITORY, capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(snapshot)], input=archive, check=True)
    byte_compile(snapshot / "pypads")
    SNAPSHOT.append(snapshot)
    return f"pypads at commit {git('rev-parse', '--short', commit)} (exported; the working tree is not used)"


def byte_compile(package: Path) -> None:
    """Compile pypads' modules as installing it does (pip writes the ``.pyc`` files): with
    ``PYTHONDONTWRITEBYTECODE`` set, as on some hosts, every tracked run would otherwise
    compile all of pypads from source, a cost no installed pypads has. The libraries the
    scripts use were compiled when they were installed."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True, stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}, one repetition")
    parser.add_argument("--only", action="append", metavar="NAME", help="this script only (repeatable)")
    parser.add_argument("--repeats", type=int, help="alternating repetitions per script (default 3, quick 1)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (first tracked stores, stderr logs)")
    parser.add_argument("--commit", metavar="REV", help="run pypads as committed at REV instead of the working tree")
    parser.add_argument("--fresh-homes", action="store_true",
                        help="every tracked run in a PYPADS_HOME and store of its own (each a first run)")
    options = parser.parse_args()
    repeats = options.repeats or (1 if options.quick else 3)
    scripts = chosen_scripts(options)
    root = Path(tempfile.mkdtemp(prefix="pypads-gallery-"))
    load = os.getloadavg()[0]
    try:
        print(f"pypads gallery benchmark: {len(scripts)} scripts, {repeats} alternating repetition(s) each; "
              f"{pypads_under_test(options.commit, root)}; "
              f"{'a home of its own per tracked run' if options.fresh_homes else 'one home for all tracked runs'}; "
              f"{time.strftime('%Y-%m-%d')}; load average {load:.1f} "
              f"on {os.cpu_count()} cores", flush=True)
        template = make_template(root)
        shared_home = None
        if not options.fresh_homes:
            shared_home = root / "home"
            shared_home.mkdir()
            shutil.copyfile(template, shared_home / "mlflow.db")
        outcomes = []
        for script in scripts:
            outcomes.append(measure(script, root, template, repeats, options.keep, shared_home))
            print(describe(outcomes[-1]), flush=True)
        summary(outcomes, repeats)
    finally:
        if options.keep:
            print(f"\nkept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    print(f"\nThe machine is shared and noisy (load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the "
          "end): wall times are medians of alternating runs; trust their order of magnitude, not the second digit.")


if __name__ == "__main__":
    main()
