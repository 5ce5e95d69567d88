"""Any MLflow URI works: a real `mlflow server` on loopback, artifacts proxied by it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import RunView, journals_uploaded, run_script
from mlflow.tracking import MlflowClient
from servers import free_port, mlflow_server
from sklearn import datasets, metrics
from sklearn.tree import DecisionTreeClassifier


@contextlib.contextmanager
def sqlite_server(folder: Path, empty_store: Path, port: int | None = None) -> Iterator[tuple[str, Path]]:
    """A real ``mlflow server`` on loopback, its SQLite store and artifacts in ``folder``."""
    database = folder / "server.db"
    if not database.exists():
        database.write_bytes(Path(empty_store).read_bytes())
    with mlflow_server(f"sqlite:///{database}", folder, port) as server:
        yield server.url, server.artifacts


@pytest.fixture
def tracking_server(tmp_path, empty_store):
    with sqlite_server(tmp_path, empty_store) as served:
        yield served


def test_tracking_into_a_remote_server(tracking_server, make_tracker):
    url, served = tracking_server
    tracker = make_tracker(uri=url, name="remote", config={"flush_timeout": 60})  # a busy host is not a dead server
    X, y = datasets.load_iris(return_X_y=True)
    model = DecisionTreeClassifier(max_depth=2).fit(X, y)
    metrics.accuracy_score(y, model.predict(X))
    run_id = tracker.run_id
    tracker.end_run()

    run = RunView(url, run_id)
    assert run.status == "FINISHED"
    assert run.params["DecisionTreeClassifier.max_depth"] == "2"
    assert "DecisionTreeClassifier.accuracy_score_X" in run.metrics
    assert '"output": "DecisionTreeClassifier(max_depth=2)"' in run.artifact_text("calls/DecisionTreeClassifier.fit.jsonl")
    assert any(served.rglob("DecisionTreeClassifier.fit.jsonl"))  # stored by the server, not beside the script


def test_a_dead_server_costs_the_script_only_the_flush_timeout_and_the_next_pypads_uploads_what_was_left(tmp_path, empty_store):
    port = free_port()  # nothing listens there yet
    url = f"http://127.0.0.1:{port}"
    code = (
        "from pypads import PyPads\n"
        f"tracker = PyPads(uri={url!r}, name='offline', config={{'flush_timeout': 1}})\n"
        "from sklearn import datasets, metrics\n"
        "from sklearn.tree import DecisionTreeClassifier\n"
        "X, y = datasets.load_iris(return_X_y=True)\n"
        "model = DecisionTreeClassifier(max_depth=2).fit(X, y)\n"
        "print(metrics.accuracy_score(y, model.predict(X)))\n"
    )
    # MLflow's HTTP client alone retries for minutes; the script must not wait for it.
    result = run_script(code, tmp_path, timeout=90)
    assert result.returncode == 0, result.stderr
    accuracy = float(result.stdout)
    assert "did not answer for 1 s" in result.stderr
    (journal,) = (tmp_path / "home" / "journal").iterdir()
    meta = json.loads((journal / "meta.json").read_text())
    assert meta["run_id"] is None and (journal / "status").read_text() == "FINISHED"
    # Its uploader goes on trying for minutes; the machine restarting ends it, and the
    # journal is then the next PyPads()'s to upload.
    os.kill(json.loads((journal / "uploader.json").read_text())["pid"], signal.SIGKILL)

    (tmp_path / "server").mkdir()
    with sqlite_server(tmp_path / "server", empty_store, port):
        # A generous timeout: this part is about the sync, and a busy host must not fail it.
        later = run_script(f"from pypads import PyPads\n"
                           f"PyPads(uri={url!r}, name='later', config={{'flush_timeout': 60}}).end_run()\n", tmp_path)
        assert later.returncode == 0, later.stderr
        assert journals_uploaded(tmp_path / "home") == [], later.stderr
        client = MlflowClient(url)
        (run,) = client.search_runs([client.get_experiment_by_name("offline").experiment_id])
        recovered = RunView(url, run.info.run_id)
        assert recovered.status == "FINISHED"
        assert recovered.params["DecisionTreeClassifier.max_depth"] == "2"
        assert recovered.metrics["DecisionTreeClassifier.accuracy_score_X"] == accuracy
        assert '"output": "DecisionTreeClassifier(max_depth=2)"' in \
            recovered.artifact_text("calls/DecisionTreeClassifier.fit.jsonl")
