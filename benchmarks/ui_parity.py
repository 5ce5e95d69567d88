"""What MLflow's UI shows for a script tracked by pypads, against the same script under autolog.

    .venv/bin/python benchmarks/ui_parity.py                       # all scripts (a few minutes)
    .venv/bin/python benchmarks/ui_parity.py --only search_grid_svc --only compare_two_classifiers
    .venv/bin/python benchmarks/ui_parity.py --keep /tmp/parity    # keep the stores, to open in the UI

Each script in ``ui_parity/`` is plain scikit-learn. It runs twice, each time into a SQLite
store of its own whose artifact root is the folder beside it: once as the gallery benchmark
runs it tracked (``PyPads()`` first, then the script by runpy; see ``gallery/run.py``, whose
launcher, environment, timing, settling and file counting are reused here), once the same way
with ``mlflow.sklearn.autolog()`` in place of ``PyPads()``, as its documentation has users write
it (no ``mlflow.start_run()``: each top-level fit is then a run of its own).

Then it reads each store with ``MlflowClient`` and prints one row per script and tracker:

- model pages: how many logged models, and the most params, metrics and linked datasets (the
  distinct ``dataset_name`` of its metrics) any one model page shows: what a user clicking the
  best-filled model sees;
- run inputs: distinct datasets (name and digest) among the inputs of all the script's runs;
- training metrics: metric keys containing ``training_`` summed over all runs (child runs too);
- pictures: ``.png``, ``.svg`` and ``.html`` artifacts of all runs;
- tags: non-``mlflow.*`` tag keys of the top-level runs (their union, as autolog has one per fit);
- artifact files and bytes of all runs, saved models (folders holding ``MLmodel``) counted apart;
- wall time of the script's process, start to exit (one run, not a median: a cost to read
  as an order of magnitude).

Last, per script: the content columns (not the costs) on which pypads shows less than autolog.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from urllib.parse import unquote, urlparse

os.environ["MLFLOW_DISABLE_TELEMETRY"] = "true"

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE / "ui_parity"
TRACKERS = ("pypads", "autolog")
PICTURES = (".png", ".svg", ".html")

# Autolog as its documentation shows it, in place of PyPads() in the gallery's launcher.
AUTOLOG_LAUNCHER = ("import runpy, sys\n"
                    "sys.argv[0] = {path!r}\n"
                    "sys.path[0] = {folder!r}\n"
                    "import mlflow\n"
                    "mlflow.set_experiment({experiment!r})\n"
                    "mlflow.sklearn.autolog()\n"
                    "runpy.run_path({path!r}, run_name='__main__')\n")


def load_gallery() -> ModuleType:
    """The gallery benchmark's runner, under a name of its own: ``benchmarks/run.py`` is
    ``run`` too, and the gallery's runner imports its ``report`` module from its folder."""
    folder = HERE / "gallery"
    sys.path.insert(0, str(folder))
    spec = importlib.util.spec_from_file_location("gallery_run", folder / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gallery = load_gallery()
from report import Outcome, size  # the gallery's, on the path since load_gallery()  # noqa: E402


@dataclass
class Shown:
    """What one tracker left of one script, as MLflow's UI would show it."""

    script: str
    tracker: str
    models: int = 0
    model_params: int = 0
    model_metrics: int = 0
    model_datasets: int = 0
    run_inputs: int = 0
    training_metrics: int = 0
    pictures: int = 0
    tags: int = 0
    runs: int = 0
    files: int = 0
    bytes: int = 0
    model_files: int = 0
    model_bytes: int = 0
    seconds: float = 0.0
    error: str = ""
    tag_names: list[str] = field(default_factory=list)


# The columns that say what a user sees (the rest are costs): (attribute, heading).
CONTENT = (("models", "models"), ("model_params", "model params"), ("model_metrics", "model metrics"),
           ("model_datasets", "model datasets"), ("run_inputs", "run inputs"),
           ("training_metrics", "training_ metrics"), ("pictures", "pictures"), ("tags", "tags"))


def local_path(uri: str) -> Path:
    """The folder of a ``file:`` artifact URI (the stores here are all local)."""
    return Path(unquote(urlparse(uri).path)) if uri.startswith("file:") else Path(uri)


def read_store(home: Path, shown: Shown) -> None:
    """Fill ``shown`` from the store in ``home``: its models, runs, datasets, tags and files."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{home / 'mlflow.db'}")
    experiments = [experiment.experiment_id for experiment in client.search_experiments()]
    runs = client.search_runs(experiments, max_results=5000)
    shown.runs = len(runs)
    models = client.search_logged_models(experiments, max_results=1000)
    shown.models = len(models)
    for model in models:
        metrics = model.metrics or []
        shown.model_params = max(shown.model_params, len(model.params))
        shown.model_metrics = max(shown.model_metrics, len(metrics))
        shown.model_datasets = max(shown.model_datasets, len({metric.dataset_name for metric in metrics
                                                              if metric.dataset_name}))
    inputs: set[tuple[str, str]] = set()
    tags: set[str] = set()
    for run in runs:
        for dataset_input in run.inputs.dataset_inputs if run.inputs else []:
            inputs.add((dataset_input.dataset.name, dataset_input.dataset.digest))
        shown.training_metrics += sum("training_" in key for key in run.data.metrics)
        folder = local_path(run.info.artifact_uri)
        if folder.exists():
            shown.pictures += sum(path.suffix in PICTURES for path in folder.rglob("*") if path.is_file())
        if "mlflow.parentRunId" not in run.data.tags:
            tags.update(key for key in run.data.tags if not key.startswith("mlflow."))
    shown.run_inputs = len(inputs)
    shown.tags = len(tags)
    shown.tag_names = sorted(tags)
    counted = Outcome(shown.script)
    gallery.count(home, counted)
    shown.files = counted.files - counted.model_files
    shown.bytes = counted.other_bytes
    shown.model_files = counted.model_files
    shown.model_bytes = counted.model_bytes


def prepare_autolog_store(home: Path, experiment: str) -> None:
    """Create autolog's experiment with the artifact root beside the database, as pypads'
    store has it (MLflow would otherwise put artifacts under the working directory)."""
    from mlflow.tracking import MlflowClient

    (home / "artifacts").mkdir()
    MlflowClient(f"sqlite:///{home / 'mlflow.db'}").create_experiment(experiment,
                                                                      artifact_location=(home / "artifacts").as_uri())


def run_script(script: Path, tracker: str, root: Path, template: Path) -> Shown:
    """One script under one tracker, in a store of its own under ``root``."""
    shown = Shown(script.stem, tracker)
    home = root / f"{script.stem}-{tracker}"
    home.mkdir()
    shutil.copyfile(template, home / "mlflow.db")
    work = root / "cwd"  # not a git repository, as in the gallery benchmark
    work.mkdir(exist_ok=True)
    log = home / "stderr.txt"
    try:
        if tracker == "pypads":
            shown.seconds = gallery.timed(gallery.tracked_command(script), work, gallery.environment(home), log)
            gallery.settle(home)
        else:
            prepare_autolog_store(home, script.stem)
            environment = gallery.environment(None)
            environment["MLFLOW_TRACKING_URI"] = f"sqlite:///{home / 'mlflow.db'}"
            command = [sys.executable, "-c", AUTOLOG_LAUNCHER.format(path=str(script), folder=str(script.parent),
                                                                      experiment=script.stem)]
            shown.seconds = gallery.timed(command, work, environment, log)
        read_store(home, shown)
    except RuntimeError as error:
        shown.error = str(error).strip().splitlines()[-1] if str(error).strip() else "failed"
    return shown


def table(rows: list[Shown]) -> None:
    """The parity table, one row per script and tracker, in Markdown."""
    headings = ["script", "tracker", *(heading for _, heading in CONTENT), "runs", "files (models apart)",
                "bytes (models apart)", "model files", "model bytes", "wall s"]
    print("\n| " + " | ".join(headings) + " |\n|" + "---|" * len(headings))
    for shown in rows:
        if shown.error:
            print(f"| {shown.script} | {shown.tracker} | FAILED: {shown.error} |")
            continue
        cells = [shown.script, shown.tracker, *(str(getattr(shown, name)) for name, _ in CONTENT), str(shown.runs),
                 str(shown.files), size(shown.bytes), str(shown.model_files), size(shown.model_bytes),
                 f"{shown.seconds:.1f}"]
        print("| " + " | ".join(cells) + " |")


def behind(rows: list[Shown]) -> None:
    """Per script, the content columns where autolog shows more than pypads."""
    print("\npypads >= autolog on every content column?")
    for script in dict.fromkeys(shown.script for shown in rows):
        pair = {shown.tracker: shown for shown in rows if shown.script == script}
        mine, theirs = pair.get("pypads"), pair.get("autolog")
        if mine is None or theirs is None or mine.error or theirs.error:
            print(f"  {script}: not compared (a run failed)")
            continue
        less = [f"{heading} ({getattr(mine, name)} < {getattr(theirs, name)})" for name, heading in CONTENT
                if getattr(mine, name) < getattr(theirs, name)]
        print(f"  {script}: " + ("yes" if not less else "pypads behind on: " + ", ".join(less)))


def chosen_scripts(only: list[str] | None) -> list[Path]:
    scripts = sorted(SCRIPTS.glob("*.py"))
    if not only:
        return scripts
    wanted = {Path(name).stem for name in only}
    unknown = wanted - {script.stem for script in scripts}
    if unknown:
        raise SystemExit(f"no such script: {', '.join(sorted(unknown))} (see {SCRIPTS})")
    return [script for script in scripts if script.stem in wanted]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", action="append", metavar="NAME", help="this script only (repeatable)")
    parser.add_argument("--keep", metavar="DIR", type=Path, help="keep the stores in DIR (one folder per script "
                        "and tracker: mlflow.db, artifacts/) to open in MLflow's UI")
    options = parser.parse_args()
    scripts = chosen_scripts(options.only)
    if options.keep:
        options.keep.mkdir(parents=True, exist_ok=False)
        root = options.keep.resolve()
    else:
        root = Path(tempfile.mkdtemp(prefix="pypads-parity-"))
    rows: list[Shown] = []
    try:
        print(f"UI parity, pypads against mlflow.sklearn.autolog(): {len(scripts)} scripts; "
              f"{gallery.pypads_under_test(None, root)}", flush=True)
        template = gallery.make_template(root)
        for script in scripts:
            for tracker in TRACKERS:
                rows.append(run_script(script, tracker, root, template))
                shown = rows[-1]
                print(f"  {script.stem} under {tracker}: " + (f"FAILED {shown.error}" if shown.error else
                      f"{shown.runs} runs, {shown.models} models, {shown.seconds:.1f} s; tags {shown.tag_names}"),
                      flush=True)
        table(rows)
        behind(rows)
    finally:
        if options.keep:
            print(f"\nkept {root}: open one with .venv/bin/mlflow ui --backend-store-uri sqlite:///{root}/<script>-"
                  f"<tracker>/mlflow.db")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
