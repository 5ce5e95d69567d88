"""Any MLflow URI works: a real `mlflow server` on loopback, artifacts proxied by it."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from sklearn import datasets, metrics
from sklearn.tree import DecisionTreeClassifier

from conftest import RunView


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def tracking_server(tmp_path, empty_store):
    database = tmp_path / "server.db"
    database.write_bytes(Path(empty_store).read_bytes())
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", f"sqlite:///{database}",
         "--artifacts-destination", str(tmp_path / "served-artifacts"), "--host", "127.0.0.1", "--port", str(port),
         "--workers", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(f"{url}/health", timeout=2)
            break
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                pytest.fail("mlflow server did not come up within 120 s")
            time.sleep(0.5)
    yield url, tmp_path / "served-artifacts"
    server.terminate()
    server.wait(timeout=30)


def test_tracking_into_a_remote_server(tracking_server, make_tracker):
    url, served = tracking_server
    tracker = make_tracker(uri=url, name="remote")
    X, y = datasets.load_iris(return_X_y=True)
    model = DecisionTreeClassifier(max_depth=2).fit(X, y)
    metrics.accuracy_score(y, model.predict(X))
    run_id = tracker.run_id
    tracker.end_run()

    run = RunView(url, run_id)
    assert run.status == "FINISHED"
    assert run.params["DecisionTreeClassifier.max_depth"] == "2"
    assert "accuracy_score" in run.metrics
    assert run.artifact_text("calls/0001_DecisionTreeClassifier.fit/output.txt") == "DecisionTreeClassifier(max_depth=2)"
    assert any(served.rglob("output.txt"))  # stored by the server, not beside the script
