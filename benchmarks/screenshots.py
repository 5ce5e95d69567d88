"""Screenshots of MLflow's UI for scripts tracked by pypads, for ``docs/run.md``.

    .venv/bin/python benchmarks/screenshots.py             # writes docs/images/*.png
    .venv/bin/python benchmarks/screenshots.py --keep /tmp/shots   # keep the store, the raw shots

Two scripts of ``ui_parity/`` (a binary classifier, two classifiers compared) run under pypads,
``PyPads(config={"pseudonymize": True}, name="pypads-example")``, against an ``mlflow server``
this script starts on a free local port with a SQLite store and served artifacts in a temporary
folder (so artifact URIs read ``mlflow-artifacts:/``, no machine path). The scripts are copied
into that folder first and run from it under their bare names, outside any git repository, so
no path of this machine is a run's source name. Then Debian's ``chromium`` takes each page
headless (under ``timeout``), Pillow crops away MLflow's Assistant panel and shrinks the PNG,
and the result goes into ``docs/images/``. The server is stopped in any case.

Pages (in MLflow's Model training view, ``?workflowType=machine_learning``): the experiment's
runs table; the single model's run: Overview, Model metrics, System metrics, and Artifacts on
``training_confusion_matrix.png``; its logged model's page and files; the comparison's two
child runs in MLflow's compare view. Look at each before committing: a chart page still
spinning after every try, or a page with a machine's value, is to be left out.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from ui_parity import SCRIPTS, gallery

HERE = Path(__file__).resolve().parent
IMAGES = HERE.parent / "docs" / "images"
EXPERIMENT = "pypads-example"
SINGLE, COMPARED = "binary_breast_cancer", "compare_two_classifiers"
MAX_BYTES = 250_000
WIDTH, HEIGHT = 1600, 1000
# Chart pages sometimes still spin when Chromium's virtual time is up: the largest of a few
# tries (a spinner's PNG is the smaller) is kept.
TRIES = {"run-system-metrics": 4, "run-model-metrics": 4}
# Pages whose lower panels matter, taken whole; the runs table wide enough for its Models column.
SIZES = {"run-overview": (WIDTH, 2000), "model-page": (WIDTH, 1700), "runs-table": (2300, 700)}

# PyPads() as a user writes it, pseudonymized, then the script by runpy under its bare name.
LAUNCHER = ("import runpy, sys\n"
            "sys.argv[0] = {name!r}\n"
            "sys.path[0] = '.'\n"
            "from pypads import PyPads\n"
            "PyPads(config={{'pseudonymize': True}}, name={experiment!r})\n"
            "runpy.run_path({name!r}, run_name='__main__')\n")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(root: Path, port: int) -> subprocess.Popen:
    """``mlflow server`` on ``port``, its store and artifacts under ``root``; waits for /health."""
    (root / "artifacts").mkdir()
    mlflow = Path(sys.executable).with_name("mlflow")
    command = [str(mlflow), "server", "--backend-store-uri", f"sqlite:///{root / 'mlflow.db'}",
               "--artifacts-destination", str(root / "artifacts"), "--serve-artifacts",
               "--host", "127.0.0.1", "--port", str(port), "--workers", "1"]
    log = open(root / "server.log", "w")
    server = subprocess.Popen(command, cwd=root, env=gallery.environment(None), stdout=log, stderr=log,
                              start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError("mlflow server exited: " + (root / "server.log").read_text()[-2000:])
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
                if answer.status == 200:
                    return server
        except OSError:
            pass
        time.sleep(1)
    raise RuntimeError("mlflow server did not answer /health in 120 s")


def stop_server(server: subprocess.Popen) -> None:
    """The server and its workers (its own process group), politely, then not."""
    import os
    import signal

    try:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=15)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(server.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        server.wait(timeout=15)


def run_script(name: str, work: Path, uri: str) -> None:
    """One example script under pypads, into the server at ``uri``; waits for its process."""
    shutil.copyfile(SCRIPTS / f"{name}.py", work / f"{name}.py")
    environment = gallery.environment(work / f".pypads-{name}")
    environment["MLFLOW_TRACKING_URI"] = uri
    command = [sys.executable, "-c", LAUNCHER.format(name=f"{name}.py", experiment=EXPERIMENT)]
    gallery.timed(command, work, environment, work / f"{name}.stderr.txt")
    deadline = time.monotonic() + 60  # its uploader draws the pictures after the script has exited
    while list((work / f".pypads-{name}" / "journal").glob("*/ended")) and time.monotonic() < deadline:
        time.sleep(0.2)


def settle(client, experiment_id: str, count: int) -> list:
    """The experiment's runs once ``count`` of them exist and none is running."""
    deadline = time.monotonic() + 180
    while True:
        runs = client.search_runs([experiment_id], max_results=100)
        if (len(runs) >= count and all(run.info.status != "RUNNING" for run in runs)) or time.monotonic() > deadline:
            return runs
        time.sleep(1)


def shoot(url: str, target: Path, width: int = WIDTH, height: int = HEIGHT) -> bool:
    """A headless Chromium screenshot of ``url`` into ``target``; False if it failed."""
    command = ["timeout", "90", "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               f"--window-size={width},{height}", "--virtual-time-budget=20000", f"--screenshot={target}", url]
    result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return result.returncode == 0 and target.exists()


def assistant_left_edge(image) -> int:
    """The x where MLflow's right-hand Assistant panel starts, or the width if there is none:
    the page's grey gutter between the main card and the panel, a few columns wide, from top
    to bottom in the right half of the page."""
    grey = image.convert("L")
    width, height = grey.size
    pixels = grey.load()
    rows = range(40, height - 40, 10)

    def gutter(x: int) -> bool:
        return all(225 <= pixels[x, y] <= 250 for y in rows)

    for x in range(width // 2, width - 100):
        if all(gutter(x + step) for step in range(4)):
            return x
    return width


def finish(raw: Path, target: Path) -> None:
    """Crop away the Assistant panel if there is one, and shrink below MAX_BYTES."""
    from PIL import Image

    image = Image.open(raw).convert("RGB")
    edge = assistant_left_edge(image)
    if edge < image.width:
        image = image.crop((0, 0, edge, image.height))
    scale = 1.0
    while True:
        shrunk = image if scale == 1.0 else image.resize((int(image.width * scale), int(image.height * scale)),
                                                         Image.LANCZOS)
        shrunk = shrunk.quantize(colors=128, method=Image.Quantize.MEDIANCUT)
        shrunk.save(target, optimize=True)
        if target.stat().st_size <= MAX_BYTES or scale < 0.5:
            return
        scale *= 0.85


def pages(client, experiment_id: str, runs: list) -> dict[str, str]:
    """The UI's routes, by image name."""
    single = next(run for run in runs if run.info.run_name and run.data.tags.get("mlflow.source.name", "")
                  .endswith(f"{SINGLE}.py") and "mlflow.parentRunId" not in run.data.tags)
    children = [run for run in runs if "mlflow.parentRunId" in run.data.tags]
    model = client.search_logged_models([experiment_id], filter_string=f"source_run_id = '{single.info.run_id}'",
                                        max_results=1)[0]
    base = f"#/experiments/{experiment_id}"
    shots = {
        "runs-table": f"{base}/runs?workflowType=machine_learning",
        "run-overview": f"{base}/runs/{single.info.run_id}?workflowType=machine_learning",
        "run-artifacts": f"{base}/runs/{single.info.run_id}/artifacts/training_confusion_matrix.png"
                         "?workflowType=machine_learning",
        "run-system-metrics": f"{base}/runs/{single.info.run_id}/system-metrics?workflowType=machine_learning",
        "run-model-metrics": f"{base}/runs/{single.info.run_id}/model-metrics?workflowType=machine_learning",
        "model-artifacts": f"{base}/models/{model.model_id}/artifacts?workflowType=machine_learning",
        "model-page": f"{base}/models/{model.model_id}?workflowType=machine_learning",
    }
    if len(children) >= 2:
        ids = ",".join(f'"{run.info.run_id}"' for run in children[:2])
        shots["compare-runs"] = (f"#/compare-runs?runs=[{ids}]&experiments=[\"{experiment_id}\"]"
                                 "&workflowType=machine_learning")
    return shots


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", metavar="DIR", type=Path, help="keep the store and the raw screenshots in DIR")
    parser.add_argument("--only", action="append", metavar="NAME", help="this image only (repeatable)")
    options = parser.parse_args()
    if options.keep:
        options.keep.mkdir(parents=True, exist_ok=False)
        root = options.keep.resolve()
    else:
        root = Path(tempfile.mkdtemp(prefix="pypads-shots-"))
    server = None
    try:
        port = free_port()
        server = start_server(root, port)
        uri = f"http://127.0.0.1:{port}"
        print(f"mlflow server at {uri}", flush=True)
        work = root / "work"
        work.mkdir()
        for name in (SINGLE, COMPARED):
            run_script(name, work, uri)
            print(f"  ran {name} under pypads", flush=True)
        from mlflow.tracking import MlflowClient

        client = MlflowClient(uri)
        experiment = client.get_experiment_by_name(EXPERIMENT)
        runs = settle(client, experiment.experiment_id, 4)
        IMAGES.mkdir(parents=True, exist_ok=True)
        for image, route in pages(client, experiment.experiment_id, runs).items():
            if options.only and image not in options.only:
                continue
            raw = root / f"{image}.raw.png"
            tries = []
            for attempt in range(TRIES.get(image, 1)):
                taken = root / f"{image}.raw{attempt}.png"
                if shoot(f"{uri}/{route}", taken, *SIZES.get(image, (WIDTH, HEIGHT))):
                    tries.append(taken)
            if not tries:
                print(f"  {image}: chromium failed, left out", flush=True)
                continue
            shutil.copyfile(max(tries, key=lambda taken: taken.stat().st_size), raw)
            finish(raw, IMAGES / f"{image}.png")
            print(f"  {image}: {route} -> docs/images/{image}.png "
                  f"({(IMAGES / f'{image}.png').stat().st_size // 1000} kB)", flush=True)
    finally:
        if server is not None:
            stop_server(server)
        if not options.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
