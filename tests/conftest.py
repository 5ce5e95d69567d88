"""Shared fixtures: a real MLflow SQLite store in a temporary folder, trackers that are
always deactivated, and helpers to read back what a run holds."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import mlflow
import pytest
from mlflow.tracking import MlflowClient

from pypads import PyPads
from pypads.run.writer import Writer
from pypads.to_mlflow.journal import JournalWriter
from pypads.to_mlflow.store import RunTarget, Store

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("PYPADS_STRICT", "1")
# No uploader outlives its test's run (tests of spare uploaders set their own idle time).
os.environ.setdefault("PYPADS_UPLOADER_IDLE", "0")  # logger errors fail tests unless a test says otherwise
# Journals and the default store of in-process trackers stay out of the user's ~/.pypads.
os.environ.setdefault("PYPADS_HOME", tempfile.mkdtemp(prefix="pypads-tests-home-"))


def writer_for(client: Any, run_id: str, store_uri: str, folder: Path) -> Writer:
    """A writer into an existing run through ``client`` (a real MlflowClient, perhaps
    observed), draining only when flushed or closed."""
    target = RunTarget(Store(store_uri, None), "tests", join_run_id=run_id)
    return Writer.for_journal(JournalWriter.create(target, root=folder), target, interval=60, open_run=lambda _: (client, run_id))


@pytest.fixture(scope="session", autouse=True)
def outside_the_working_tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """MLflow keeps the artifacts of experiments it creates itself (the Default one, those
    tests create through MlflowClient) in ``./mlruns``: a temporary folder's, not ours."""
    previous = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("cwd"))
    yield
    os.chdir(previous)


@pytest.fixture(scope="session")
def empty_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite store with MLflow's schema, made once: creating the schema takes seconds."""
    database = tmp_path_factory.mktemp("template") / "mlflow.db"
    MlflowClient(f"sqlite:///{database}").search_experiments()
    return database


@pytest.fixture
def store_uri(tmp_path: Path, empty_store: Path) -> str:
    database = tmp_path / "mlflow.db"
    shutil.copyfile(empty_store, database)
    return f"sqlite:///{database}"


@pytest.fixture
def make_tracker(store_uri: str) -> Iterator[Callable[..., PyPads]]:
    created: list[PyPads] = []

    def make(**kwargs: Any) -> PyPads:
        kwargs.setdefault("uri", store_uri)
        kwargs.setdefault("name", "tests")
        tracker = PyPads(**kwargs)
        created.append(tracker)
        return tracker

    yield make
    for tracker in created:
        tracker.deactivate()
    while mlflow.active_run() is not None:
        mlflow.end_run()


class RunView:
    """What a finished run holds, read back through a fresh MLflow client."""

    def __init__(self, uri: str, run_id: str) -> None:
        self.uri = uri
        self.client = MlflowClient(uri)
        self.run = self.client.get_run(run_id)
        self.run_id = run_id

    @property
    def params(self) -> dict[str, str]:
        return self.run.data.params

    @property
    def metrics(self) -> dict[str, float]:
        return self.run.data.metrics

    @property
    def tags(self) -> dict[str, str]:
        return self.run.data.tags

    @property
    def status(self) -> str:
        return self.run.info.status

    def metric_history(self, key: str) -> list[tuple[int, float]]:
        return [(m.step, m.value) for m in self.client.get_metric_history(self.run_id, key)]

    def artifacts(self, path: str | None = None) -> list[str]:
        files = []
        for item in self.client.list_artifacts(self.run_id, path):
            files.extend(self.artifacts(item.path) if item.is_dir else [item.path])
        return files

    def artifact_bytes(self, path: str) -> bytes:
        local = mlflow.artifacts.download_artifacts(run_id=self.run_id, artifact_path=path, tracking_uri=self.uri)
        return Path(local).read_bytes()

    def artifact_text(self, path: str) -> str:
        return self.artifact_bytes(path).decode("utf-8")


@pytest.fixture
def read_run(store_uri: str) -> Callable[[str], RunView]:
    return lambda run_id: RunView(store_uri, run_id)


def only_run(uri: str) -> RunView:
    """The single run of a store (for subprocess tests, where the id is not returned);
    its child runs (a search's candidates, the models it compares) are part of it."""
    client = MlflowClient(uri)
    runs = [run for experiment in client.search_experiments() for run in client.search_runs([experiment.experiment_id])]
    top = [run for run in runs if "mlflow.parentRunId" not in run.data.tags]
    assert len(top) == 1, f"expected one run, found {len(top)} (and {len(runs) - len(top)} child runs)"
    strays = [run.info.run_id for run in runs if run.data.tags.get("mlflow.parentRunId", top[0].info.run_id) != top[0].info.run_id]
    assert not strays, f"child runs of another run: {strays}"
    return RunView(uri, top[0].info.run_id)


def ended_run(uri: str, timeout: float = 60) -> RunView:
    """:func:`only_run` once it has ended: a script that died of a signal leaves the end
    of its run to its uploader, which finishes a moment later."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            run = only_run(uri)
            if run.status != "RUNNING" or time.monotonic() > deadline:
                return run
        except AssertionError:  # not opened yet
            if time.monotonic() > deadline:
                raise
        time.sleep(0.2)


def store_of(tmp_path: Path) -> str:
    """The default store of scripts run with :func:`script_environment` (``tmp_path/home``)."""
    return f"sqlite:///{tmp_path / 'home' / 'mlflow.db'}"


@pytest.fixture
def home_with_store(tmp_path: Path, empty_store: Path) -> Path:
    """The scripts' PYPADS_HOME, with a store whose tables exist (creating them takes seconds)."""
    (tmp_path / "home").mkdir(exist_ok=True)
    shutil.copyfile(empty_store, tmp_path / "home" / "mlflow.db")
    return tmp_path / "home"


def journals_uploaded(home: Path, timeout: float = 60) -> list[Path]:
    """The journals still in ``home`` once they are gone or ``timeout`` has passed: an
    uploader finishes a recovery on its own after its script has exited."""
    folder = home / "journal"
    deadline = time.monotonic() + timeout
    while folder.exists() and any(folder.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return sorted(folder.iterdir()) if folder.exists() else []


def script_environment(tmp_path: Path) -> dict[str, str]:
    """The environment for a script whose runs go to the default store in ``tmp_path/home``.

    ``mlflow.set_tracking_uri`` exports MLFLOW_TRACKING_URI to child processes: drop it,
    or a script would write into whatever store an earlier test used.
    """
    environment = {key: value for key, value in os.environ.items() if key not in {"MLFLOW_TRACKING_URI", "MLFLOW_PATH", "MLFLOW_RUN_ID"}}
    return {**environment, "PYPADS_HOME": str(tmp_path / "home")}


def run_script(code: str, tmp_path: Path, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``code`` as a script in a fresh interpreter, with the store in ``tmp_path``."""
    script = tmp_path / "script.py"
    script.write_text(code)
    environment = {**script_environment(tmp_path), **(env or {})}
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=environment,
                            capture_output=True, text=True, timeout=timeout)
    pictures_drawn(Path(environment["PYPADS_HOME"]))
    return result


def pictures_drawn(home: Path, timeout: float = 60) -> None:
    """Wait until the uploaders of ``home``'s ended runs have drawn their pictures: they
    do after the script has exited (each journal goes once they are in the run)."""
    deadline = time.monotonic() + timeout
    while list((home / "journal").glob("*/ended")) and time.monotonic() < deadline:
        time.sleep(0.1)


@pytest.fixture
def toylib(tmp_path, monkeypatch):
    """A tiny installed library, ``toylib`` 1.2.0, with a class, functions and a submodule."""
    root = tmp_path / "site"
    package = root / "toylib"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "models.py").write_text(textwrap.dedent('''
        class Model:
            def fit(self, data):
                self.total = sum(data)
                return self
            def score(self, data):
                return float(sum(data))
            def _private(self):
                return 1
    '''))
    (package / "scoring.py").write_text(textwrap.dedent('''
        def accuracy(a, b):
            return 1.0
        def helper(a):
            return a
    '''))
    (package / "classification_metrics.py").write_text("def kappa(a, b):\n    return 0.5\n")
    (package / "reexports.py").write_text("from toylib.classification_metrics import kappa\nfrom toylib.scoring import helper\n")
    dist = root / "toylib-1.2.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toylib\nVersion: 1.2.0\n")
    monkeypatch.syspath_prepend(str(root))
    yield root
    for name in [name for name in sys.modules if name.split(".")[0] == "toylib"]:
        del sys.modules[name]
