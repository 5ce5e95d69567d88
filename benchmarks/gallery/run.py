"""The gallery benchmark: scikit-learn scripts of our own, each run untracked and tracked.

    .venv/bin/python benchmarks/gallery/run.py                 # all scripts (about 15 minutes)
    .venv/bin/python benchmarks/gallery/run.py --quick         # a handful, one repetition
    .venv/bin/python benchmarks/gallery/run.py --only cv_score_models --only search_grid_svc

Each script in ``scripts/`` is plain scikit-learn (no pypads in it). Untracked it runs as
``python script.py``; tracked, as the same script run by runpy after
``from pypads import PyPads; PyPads()``, so its line numbers are its own. Every tracked
run gets a store of its own: a copy of a SQLite store whose tables were created once
beforehand, in a fresh ``PYPADS_HOME``. After the script's process exits, the runner
waits for its runs to end, then counts the files and bytes under the store's artifact
folder (the script's run, its child runs and its logged models): bytes of saved MLflow
models (folders holding an ``MLmodel`` file) apart from the rest. Wall time is the
script process' own, from start to exit (so it includes the wait at the end of the run),
as the median of alternating untracked/tracked repetitions. This is a benchmark, not a
test: nothing here asserts a budget.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

SCRIPTS = Path(__file__).resolve().parent / "scripts"
QUICK = ("classify_iris_tree", "pipeline_column_transformer", "search_grid_pipeline", "cv_score_models",
         "partial_fit_sgd_classifier")
MEDIAN_FILES, MAX_FILES = 60, 500
MEDIAN_BYTES, MAX_BYTES = 1_000_000, 20_000_000
MEDIAN_RATIO = 1.5
SETTLE_TIMEOUT = 180.0

# Tracked: the same file, run by runpy after PyPads(); argv[0] and path[0] as `python script.py` sets them.
LAUNCHER = ("import runpy, sys\n"
            "sys.argv[0] = {path!r}\n"
            "sys.path[0] = {folder!r}\n"
            "from pypads import PyPads\n"
            "PyPads()\n"
            "runpy.run_path({path!r}, run_name='__main__')\n")


@dataclass
class Outcome:
    """What one script cost: its artifacts (from the first tracked run) and its wall times."""

    name: str
    untracked: list[float] = field(default_factory=list)
    tracked: list[float] = field(default_factory=list)
    files: int = 0
    other_bytes: int = 0
    model_files: int = 0
    model_bytes: int = 0
    runs: int = 0
    statuses: str = ""
    failures: list[str] = field(default_factory=list)
    patterns: Counter[str] = field(default_factory=Counter)
    pattern_bytes: Counter[str] = field(default_factory=Counter)
    error: str = ""

    @property
    def ratio(self) -> float:
        return statistics.median(self.tracked) / statistics.median(self.untracked)


def environment(home: Path | None) -> dict[str, str]:
    """The caller's environment without any MLflow target, and with pypads' home in ``home``."""
    env = {key: value for key, value in os.environ.items()
           if key not in {"MLFLOW_TRACKING_URI", "MLFLOW_PATH", "MLFLOW_RUN_ID", "PYPADS_HOME"}}
    env["MLFLOW_DISABLE_TELEMETRY"] = "true"
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


def settle(home: Path) -> tuple[int, str, list[str]]:
    """Wait until the store's runs have all ended: their count, statuses and failure tags."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{home / 'mlflow.db'}")
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while True:
        experiments = [experiment.experiment_id for experiment in client.search_experiments()]
        runs = client.search_runs(experiments, max_results=5000) if experiments else []
        if (runs and all(run.info.status != "RUNNING" for run in runs)) or time.monotonic() > deadline:
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


def count(home: Path, outcome: Outcome) -> None:
    """Files and bytes under the store's artifact folder, models apart from the rest."""
    root = home / "artifacts"
    if not root.exists():
        return
    files = [path for path in root.rglob("*") if path.is_file()]
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


def measure(script: Path, root: Path, template: Path, repeats: int) -> Outcome:
    """Alternating untracked and tracked runs of one script; artifacts of the first tracked one."""
    outcome = Outcome(script.stem)
    work = root / "cwd"  # not a git repository: IGit logs nothing, as for a script outside one
    work.mkdir(exist_ok=True)
    log = root / f"{script.stem}.stderr"
    try:
        for repeat in range(repeats):
            outcome.untracked.append(timed([sys.executable, str(script)], work, environment(None), log))
            home = root / f"{script.stem}-{repeat}"
            home.mkdir()
            shutil.copyfile(template, home / "mlflow.db")
            outcome.tracked.append(timed(tracked_command(script), work, environment(home), log))
            if repeat == 0:
                outcome.runs, outcome.statuses, outcome.failures = settle(home)
                count(home, outcome)
            else:
                settle(home)
            shutil.rmtree(home, ignore_errors=True)
    except RuntimeError as error:
        outcome.error = str(error)
    return outcome


def size(count_bytes: float) -> str:
    for unit, scale in (("MB", 1e6), ("kB", 1e3)):
        if count_bytes >= scale:
            return f"{count_bytes / scale:.1f} {unit}"
    return f"{count_bytes:.0f} B"


def describe(outcome: Outcome) -> str:
    if outcome.error:
        return f"  {outcome.name}: FAILED {outcome.error.strip().splitlines()[-1] if outcome.error.strip() else ''}"
    failures = f"; failed loggers: {', '.join(outcome.failures)}" if outcome.failures else ""
    return (f"  {outcome.name}: {outcome.files} files, {size(outcome.other_bytes)} other, models {outcome.model_files} "
            f"files {size(outcome.model_bytes)}; {outcome.runs} runs ({outcome.statuses}) | untracked "
            f"{statistics.median(outcome.untracked):.2f} s, tracked {statistics.median(outcome.tracked):.2f} s | "
            f"{outcome.ratio:.2f}x{failures}")


def top_patterns(outcome: Outcome, shown: int = 4) -> str:
    return ", ".join(f"{kind} x{files} ({size(outcome.pattern_bytes[kind])})"
                     for kind, files in outcome.patterns.most_common(shown))


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def summary(outcomes: list[Outcome], repeats: int) -> None:
    done = [outcome for outcome in outcomes if not outcome.error]
    failed = [outcome.name for outcome in outcomes if outcome.error]
    if not done:
        print("no script ran to the end")
        return
    files = [outcome.files for outcome in done]
    other = [outcome.other_bytes for outcome in done]
    models = [outcome.model_bytes for outcome in done]
    ratios = [outcome.ratio for outcome in done]
    most_files = max(done, key=lambda outcome: outcome.files)
    most_bytes = max(done, key=lambda outcome: outcome.other_bytes)
    over_files = [outcome.name for outcome in done if outcome.files > MAX_FILES]
    over_bytes = [outcome.name for outcome in done if outcome.other_bytes > MAX_BYTES]
    rows = [
        (f"artifact files per run ({len(done)} scripts)", f"median {statistics.median(files):.0f}, max {most_files.files} "
         f"({most_files.name})", f"of which model files: median {statistics.median(o.model_files for o in done):.0f}",
         f"budget median ≤ {MEDIAN_FILES} ({verdict(statistics.median(files) <= MEDIAN_FILES)}), none above {MAX_FILES} "
         f"({verdict(not over_files)}: {len(over_files)} above)"),
        ("artifact bytes other than models", f"median {size(statistics.median(other))}, max {size(most_bytes.other_bytes)} "
         f"({most_bytes.name})", f"models: median {size(statistics.median(models))}, max {size(max(models))}",
         f"budget median ≤ {size(MEDIAN_BYTES)} ({verdict(statistics.median(other) <= MEDIAN_BYTES)}), none above "
         f"{size(MAX_BYTES)} ({verdict(not over_bytes)}: {len(over_bytes)} above)"),
        (f"wall time, tracked / untracked (median of {repeats})",
         f"tracked median {statistics.median(statistics.median(o.tracked) for o in done):.2f} s",
         f"untracked median {statistics.median(statistics.median(o.untracked) for o in done):.2f} s",
         f"median ratio {statistics.median(ratios):.2f}x, max {max(ratios):.2f}x (budget median ≤ {MEDIAN_RATIO}x: "
         f"{verdict(statistics.median(ratios) <= MEDIAN_RATIO)})"),
    ]
    print("\n| row | pypads | anchor | ratio |\n|---|---|---|---|")
    for name, measured, anchor, ratio in rows:
        print(f"| {name} | {measured} | {anchor} | {ratio} |")
    print("\nWorst 5 by artifact files:\n\n| script | files | other bytes | model bytes | wall ratio | most files |\n"
          "|---|---|---|---|---|---|")
    for outcome in sorted(done, key=lambda o: (o.files, o.other_bytes), reverse=True)[:5]:
        print(f"| {outcome.name} | {outcome.files} | {size(outcome.other_bytes)} | {size(outcome.model_bytes)} | "
              f"{outcome.ratio:.2f}x | {top_patterns(outcome)} |")
    everything: Counter[str] = Counter()
    for outcome in done:
        everything.update(outcome.patterns)
    print("\nFiles by kind over all scripts: " + ", ".join(f"{kind} x{n}" for kind, n in everything.most_common(10)))
    if failed:
        print(f"\nFAILED ({len(failed)}): {', '.join(failed)}")


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

    database = folder / "template.db"
    MlflowClient(f"sqlite:///{database}").search_experiments()
    return database


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}, one repetition")
    parser.add_argument("--only", action="append", metavar="NAME", help="this script only (repeatable)")
    parser.add_argument("--repeats", type=int, help="alternating repetitions per script (default 3, quick 1)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (stores, stderr logs)")
    options = parser.parse_args()
    repeats = options.repeats or (1 if options.quick else 3)
    scripts = chosen_scripts(options)
    root = Path(tempfile.mkdtemp(prefix="pypads-gallery-"))
    load = os.getloadavg()[0]
    print(f"pypads gallery benchmark: {len(scripts)} scripts, {repeats} alternating repetition(s) each; "
          f"load average {load:.1f} on {os.cpu_count()} cores", flush=True)
    try:
        template = make_template(root)
        outcomes = []
        for script in scripts:
            outcomes.append(measure(script, root, template, repeats))
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
