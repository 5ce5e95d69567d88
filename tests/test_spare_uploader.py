"""Spare uploaders: the next script's run is served by the uploader that has MLflow
imported already, and nothing about the scripts changes but that."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from conftest import script_environment, store_of
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
            if "from pypads.uploader import main" in " ".join(process.info["cmdline"] or ()) and \
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
