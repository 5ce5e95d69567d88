"""Spare uploaders: the next script's run is served by the uploader that has MLflow
imported already, and nothing about the scripts changes but that."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from conftest import ended_run, journals_uploaded, script_environment, store_of
from mlflow.tracking import MlflowClient

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="spare uploaders wait on Unix sockets")

SCRIPT = """
import os, sys
from pypads import PyPads
tracker = PyPads(name="spares")
from sklearn.datasets import load_iris
from sklearn.tree import DecisionTreeClassifier
X, y = load_iris(return_X_y=True)
DecisionTreeClassifier(max_depth=int(sys.argv[1])).fit(X, y)
print("uploader", tracker.writer.uploader_pid, flush=True)
"""


@pytest.fixture
def temporary() -> Iterator[Path]:
    """The scripts' TMPDIR, short: a Unix socket's path has at most 107 bytes."""
    folder = Path(tempfile.mkdtemp(prefix="pp-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def spares(tmp_path: Path, home_with_store: Path, temporary: Path) -> Iterator[dict[str, str]]:
    """The environment of scripts whose uploaders wait 30 s as spares, in a temporary
    folder of their own; the spares left waiting are stopped afterwards."""
    environment = {**script_environment(tmp_path), "TMPDIR": str(temporary), "PYPADS_UPLOADER_IDLE": "30"}
    yield environment
    for process in waiting_spares(temporary):
        process.kill()


def waiting_spares(temporary: Path) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            if "from pypads.to_mlflow.uploader import main" in " ".join(process.info["cmdline"] or ()) and \
                    process.environ().get("TMPDIR") == str(temporary):
                found.append(process)
        except psutil.Error:
            continue
    return found


def ended(pid: int, timeout: float) -> bool:
    """Whether process ``pid`` (not a child of ours) ends within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


def run(tmp_path: Path, environment: dict[str, str], depth: int, folder: str = ".") -> tuple[int, float]:
    """Run the script in ``tmp_path/folder``: the uploader's pid, and how long the caller,
    which captures the script's output, waited for it."""
    where = tmp_path / folder
    where.mkdir(exist_ok=True)
    (where / "train.py").write_text(SCRIPT)
    started = time.monotonic()
    result = subprocess.run([sys.executable, "train.py", str(depth)], cwd=where, env=environment, capture_output=True,
                            text=True, timeout=120)
    waited = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    return int(result.stdout.split()[-1]), waited


def finished_runs(tmp_path: Path) -> list:
    client = MlflowClient(store_of(tmp_path))
    experiment = client.get_experiment_by_name("spares")
    return client.search_runs([experiment.experiment_id], order_by=["attributes.start_time ASC"])


def test_the_next_script_is_served_by_the_spare_and_its_run_is_whole(tmp_path, spares):
    first, _ = run(tmp_path, spares, 2)
    second, waited = run(tmp_path, spares, 3, folder="elsewhere")
    assert second == first  # the spare served it: no second MLflow start-up
    # The caller that captured the output did not wait for the spare's 30 s.
    assert waited < 30
    spare = psutil.Process(first)
    assert spare.cwd() == str(tmp_path / "elsewhere")  # it took over the second script's surroundings

    runs = finished_runs(tmp_path)
    assert [run.info.status for run in runs] == ["FINISHED", "FINISHED"]
    assert [run.data.params["DecisionTreeClassifier.max_depth"] for run in runs] == ["2", "3"]
    assert all(run.data.tags["mlflow.source.name"] == "train.py" for run in runs)
    client = MlflowClient(store_of(tmp_path))
    models = client.search_logged_models([runs[0].info.experiment_id])
    assert sorted(model.source_run_id for model in models) == sorted(run.info.run_id for run in runs)


# Twelve models compared: a dozen child runs, whose pictures take the spare seconds to
# draw after the script has exited.
MANY_MODELS = """
from pypads import PyPads
tracker = PyPads(name="spares")
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
X, y = load_iris(return_X_y=True)
for C in [0.01 * 2 ** power for power in range(12)]:
    LogisticRegression(C=C, max_iter=500).fit(X, y).score(X, y)
print("uploader", tracker.writer.uploader_pid, flush=True)
"""


def test_the_next_script_never_waits_for_the_pictures_of_the_run_before(tmp_path, spares):
    (tmp_path / "many.py").write_text(MANY_MODELS)
    many = subprocess.run([sys.executable, "many.py"], cwd=tmp_path, env=spares, capture_output=True, text=True,
                          timeout=120)
    assert many.returncode == 0, many.stderr
    [drawing] = list((tmp_path / "home" / "journal").glob("*/ended"))  # its pictures are being drawn
    second, _ = run(tmp_path, spares, 3)
    assert second == int(many.stdout.split()[-1])  # the spare drawing them served the next script
    # That script's run ended, whole, while the pictures of the one before were still drawn.
    assert drawing.exists()
    runs = [found for found in finished_runs(tmp_path) if "mlflow.parentRunId" not in found.data.tags]
    assert [found.info.status for found in runs] == ["FINISHED", "FINISHED"]
    assert runs[1].data.params["DecisionTreeClassifier.max_depth"] == "3"

    assert journals_uploaded(tmp_path / "home") == []  # then they were all drawn
    client = MlflowClient(store_of(tmp_path))
    children = client.search_runs([runs[0].info.experiment_id], f"tags.mlflow.parentRunId = '{runs[0].info.run_id}'")
    assert len(children) == 12
    for child in children:
        assert "training_confusion_matrix.png" in {item.path for item in client.list_artifacts(child.info.run_id)}


def test_a_spare_ends_after_its_idle_time_and_leaves_no_socket(tmp_path, spares, temporary):
    spares["PYPADS_UPLOADER_IDLE"] = "1"
    pid, _ = run(tmp_path, spares, 2)
    assert ended(pid, timeout=30)
    folder = temporary / f"pypads-{os.getuid()}"
    assert list(folder.iterdir()) == []


def test_a_spare_whose_store_was_removed_hands_the_run_to_a_fresh_uploader(tmp_path, spares, empty_store, temporary):
    first, _ = run(tmp_path, spares, 2)
    # The user starts over: a new store file where the old one was.
    database = tmp_path / "home" / "mlflow.db"
    database.unlink()
    shutil.copyfile(empty_store, database)
    second, _ = run(tmp_path, spares, 3)
    assert second != first
    assert [run.data.params["DecisionTreeClassifier.max_depth"] for run in finished_runs(tmp_path)] == ["3"]
    assert [process.pid for process in waiting_spares(temporary)] == [second]  # the stale one ended


def test_a_spare_serves_a_run_into_another_store_though_its_last_one_is_gone(tmp_path, spares, empty_store):
    first, _ = run(tmp_path, spares, 2)
    (tmp_path / "home" / "mlflow.db").unlink()  # a benchmark that cleans up after each run
    other = tmp_path / "other"
    other.mkdir()
    shutil.copyfile(empty_store, other / "mlflow.db")
    second, _ = run(tmp_path, {**spares, "PYPADS_HOME": str(other)}, 3)
    assert second == first
    client = MlflowClient(f"sqlite:///{other / 'mlflow.db'}")
    [finished] = client.search_runs([client.get_experiment_by_name("spares").experiment_id])
    assert finished.info.status == "FINISHED" and finished.data.params["DecisionTreeClassifier.max_depth"] == "3"


def test_a_socket_folder_others_may_enter_is_never_used(tmp_path, spares, temporary):
    folder = temporary / f"pypads-{os.getuid()}"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    first, _ = run(tmp_path, spares, 2)
    second, _ = run(tmp_path, spares, 3)
    assert second != first
    assert list(folder.iterdir()) == []  # no spare waited there
    assert [run.info.status for run in finished_runs(tmp_path)] == ["FINISHED", "FINISHED"]


def test_uploader_idle_zero_leaves_no_spare(tmp_path, spares, temporary):
    spares["PYPADS_UPLOADER_IDLE"] = "0"
    pid, _ = run(tmp_path, spares, 2)
    assert ended(pid, timeout=30)
    assert waiting_spares(temporary) == []


def test_a_malformed_idle_variable_is_one_clear_error(tmp_path, spares):
    spares["PYPADS_UPLOADER_IDLE"] = "five minutes"
    (tmp_path / "train.py").write_text(SCRIPT)
    result = subprocess.run([sys.executable, "train.py", "2"], cwd=tmp_path, env=spares, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode != 0
    assert "ConfigError: environment variable PYPADS_UPLOADER_IDLE: 'five minutes'" in result.stderr


# A script killed by SIGTERM while a claimed spare serves its run. stdout carries the
# moments the test aims at: START (before pypads is imported), GO (after PyPads(), the
# fit begins), EXITING (pypads' end of the run begins, at exit), ENDED (it has returned).
KILLED_SCRIPT = """
import atexit, sys, time
atexit.register(print, "ENDED", flush=True)  # registered first, so it runs after pypads' end
print("START", flush=True)
from pypads import PyPads
tracker = PyPads(name="spares", config={"flush_timeout": FLUSH})
atexit.register(print, "EXITING", flush=True)
import numpy as np
from sklearn.datasets import load_iris
from sklearn.decomposition import PCA
from sklearn.tree import DecisionTreeClassifier
print("GO", flush=True)
if sys.argv[1] == "pca":
    PCA(svd_solver="full").fit(np.random.default_rng(0).random((2500, 2500)))
else:
    X, y = load_iris(return_X_y=True)
    until = time.monotonic() + float(sys.argv[1])
    while time.monotonic() < until:
        DecisionTreeClassifier(max_depth=3, random_state=int(sys.argv[2])).fit(X, y)
""".replace("FLUSH", "10")
FLUSH_TIMEOUT = 10.0  # the scripts' config["flush_timeout"]: how long a pipe may stay open after the script


class Output:
    """A pipe of the script's, read to its end on a thread: it ends once every process
    that holds it (the script, an uploader that has its stderr) has let go."""

    def __init__(self, stream) -> None:
        self.text = ""
        self.closed = threading.Event()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in iter(stream.readline, ""):
            self.text += line
        self.closed.set()

    def wait_for(self, marker: str, timeout: float = 60) -> bool:
        deadline = time.monotonic() + timeout
        while marker not in self.text and not self.closed.is_set() and time.monotonic() < deadline:
            time.sleep(0.005)
        return marker in self.text


def sigterm(tmp_path: Path, environment: dict[str, str], arguments: list[str], moment: str, delay: float
            ) -> tuple[str, Output, Output]:
    """Run the killed script, SIGTERM it ``delay`` seconds after ``moment`` (a marker on
    its stdout) and return where the signal landed (the last marker seen before it)
    with its stdout and stderr, once it has died."""
    (tmp_path / "killed.py").write_text(KILLED_SCRIPT)
    process = subprocess.Popen([sys.executable, "killed.py", *arguments], cwd=tmp_path, env=environment,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = Output(process.stdout), Output(process.stderr)
    try:
        assert stdout.wait_for(moment), stdout.text + stderr.text
        time.sleep(delay)
        landed = [marker for marker in ("START", "GO", "EXITING", "ENDED") if marker in stdout.text][-1]
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    finally:
        process.kill()
    return landed, stdout, stderr


def assert_let_go(stdout: Output, stderr: Output) -> None:
    """The caller that reads the dead script's output is not held, and is told nothing
    the script did not cause."""
    assert stdout.closed.wait(FLUSH_TIMEOUT), "the script's stdout is still held"
    assert stderr.closed.wait(FLUSH_TIMEOUT), f"the script's stderr is still held:\n{stderr.text}"
    assert "Traceback" not in stderr.text, stderr.text


def spare_socket(temporary: Path, timeout: float = 60) -> bool:
    """Whether a spare waits (its socket is in place) within ``timeout`` seconds."""
    folder = temporary / f"pypads-{os.getuid()}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if folder.is_dir() and any(folder.glob("*.sock")):
            return True
        time.sleep(0.05)
    return False


def test_sigterm_while_the_claimed_spare_creates_a_new_stores_tables_ends_the_run_killed(tmp_path, spares, temporary):
    # The case: the spare is busy creating MLflow's tables (and telling the script
    # so) when the script dies, with those answers still unread at the script's end.
    first, _ = run(tmp_path, spares, 2)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    environment = {**spares, "PYPADS_HOME": str(fresh)}
    landed, stdout, stderr = sigterm(tmp_path, environment, ["pca"], "GO", random.uniform(1, 2))
    assert landed == "GO"
    assert_let_go(stdout, stderr)
    # The journal goes once the run has ended: the tables are made by then, and reading
    # the store sooner would race the spare's making them.
    assert journals_uploaded(fresh) == []
    assert ended_run(f"sqlite:///{fresh / 'mlflow.db'}").status == "KILLED"
    assert [process.pid for process in waiting_spares(temporary)] == [first]  # it waits for the next run again


def test_20_sigterms_at_random_moments_each_with_a_waiting_spare_end_every_run_killed(tmp_path, spares, temporary):
    idle = 15.0  # longer than a try, so that the spare waits for the next one
    spares["PYPADS_UPLOADER_IDLE"] = str(idle)
    run(tmp_path, spares, 2)
    rng = random.Random()
    expected: dict[str, set[str]] = {}  # a try's random_state: the statuses its run may end with
    for number in range(20):
        assert spare_socket(temporary), f"no spare waits for try {number}: {[p.pid for p in waiting_spares(temporary)]}"
        moment = ("START", "GO", "EXITING")[number % 3]  # start-up, a fit, the flush at exit
        delay = {"START": rng.uniform(0, 1.0), "GO": rng.uniform(0, 0.5), "EXITING": rng.uniform(0, 0.05)}[moment]
        landed, stdout, stderr = sigterm(tmp_path, spares, ["0.5", str(number)], moment, delay)
        assert_let_go(stdout, stderr)
        # An end that had begun may have reached the uploader: the script had finished.
        expected[str(number)] = {"KILLED"} if landed in {"START", "GO"} else \
            {"FINISHED"} if landed == "ENDED" else {"KILLED", "FINISHED"}
        # Killed before PyPads() made its journal, a try leaves no run; after, it has one
        # that ends, at the latest once the next script's uploader recovers its journal.
    run(tmp_path, spares, 2)  # recovers what the last try left behind
    assert journals_uploaded(tmp_path / "home") == []
    # The child runs of a try's several models are its run's own; the runs themselves count.
    runs = [run_ for run_ in finished_runs(tmp_path) if "mlflow.parentRunId" not in run_.data.tags]
    assert {run_.info.status for run_ in runs} <= {"KILLED", "FINISHED"}
    for run_ in runs:
        params = run_.data.params
        if params.get("DecisionTreeClassifier.max_depth") == "3":  # a try's, past its first fit
            assert run_.info.status in expected[params["DecisionTreeClassifier.random_state"]], params
        elif params.get("DecisionTreeClassifier.max_depth") != "2":  # not one of the two quick runs
            assert run_.info.status == "KILLED", (params, run_.data.tags, expected)
    assert sum(run_.info.status == "FINISHED" and run_.data.params.get("DecisionTreeClassifier.max_depth") == "2"
               for run_ in runs) == 2
    # No uploader outlives its idle time once the last run has ended.
    for process in waiting_spares(temporary):
        assert ended(process.pid, idle + FLUSH_TIMEOUT), f"uploader {process.pid} outlived its idle time"
