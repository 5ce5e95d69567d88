"""Defects found in review, each pinned by a test."""

from __future__ import annotations

import math
import os
import threading

import mlflow
import numpy as np
import pytest
from conftest import RunView, writer_for
from mlflow.tracking import MlflowClient
from sklearn import datasets
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.tree import DecisionTreeClassifier

from pypads import ConfigError, PyPads

X, y = datasets.load_iris(return_X_y=True)


def test_joining_an_active_run_tracks_into_that_runs_store(tmp_path, empty_store, monkeypatch):
    monkeypatch.setenv("PYPADS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    user_store = f"sqlite:///{tmp_path / 'user.db'}"
    (tmp_path / "user.db").write_bytes(empty_store.read_bytes())
    mlflow.set_tracking_uri(user_store)
    try:
        with mlflow.start_run() as run:
            tracker = PyPads()
            DecisionTreeClassifier(max_depth=3).fit(X, y)
            tracker.end_run()
            mlflow.log_param("after", "pypads")  # the user's own MLflow calls still work
            tracker.deactivate()
        view = RunView(user_store, run.info.run_id)
        assert view.params["DecisionTreeClassifier.max_depth"] == "3" and view.params["after"] == "pypads"
        assert view.status == "FINISHED"
    finally:
        mlflow.set_tracking_uri(None)


def test_uri_contradicting_the_active_runs_store_is_refused(store_uri, tmp_path, empty_store):
    (tmp_path / "other.db").write_bytes(empty_store.read_bytes())
    mlflow.set_tracking_uri(store_uri)
    try:
        with mlflow.start_run():
            with pytest.raises(ConfigError, match="an MLflow run is active in"):
                PyPads(uri=f"sqlite:///{tmp_path / 'other.db'}")
    finally:
        mlflow.set_tracking_uri(None)


def test_set_output_survives_deactivate_for_classes_made_while_tracking(make_tracker):
    pandas = pytest.importorskip("pandas")
    tracker = make_tracker()

    class Doubler(TransformerMixin, BaseEstimator):
        def fit(self, X, y=None):
            return self

        def transform(self, X):
            return np.asarray(X) * 2

        def get_feature_names_out(self, input_features=None):
            return np.array([f"x{i}" for i in range(4)], dtype=object)

    assert isinstance(Doubler().set_output(transform="pandas").fit_transform(X), pandas.DataFrame)
    tracker.deactivate()
    assert isinstance(Doubler().set_output(transform="pandas").fit_transform(X), pandas.DataFrame)


def test_mapping_an_immutable_type_leaves_it_alone(make_tracker):
    document = {
        "metadata": {"library": "sklearn", "distribution": "scikit-learn", "library_versions": ">=1", "mapping_version": "1"},
        "algorithms": [{"name": "tree internals", "implementation": {"sklearn": "sklearn.tree._tree.Tree"},
                        "hooks": {"pypads_predict": ["apply", "predict"]}}],
    }
    tracker = make_tracker(mapping=document)
    model = DecisionTreeClassifier(random_state=0).fit(X, y)
    assert model.tree_.apply(X.astype(np.float32)).shape == (150,)
    tracker.deactivate()


def test_a_call_that_outlives_end_run_still_writes(make_tracker, read_run):
    started, release = threading.Event(), threading.Event()

    class Slow(DecisionTreeClassifier):
        def fit(self, X, y, sample_weight=None, check_input=True):
            started.set()
            release.wait(30)
            return super().fit(X, y, sample_weight=sample_weight, check_input=check_input)

    tracker = make_tracker()
    worker = threading.Thread(target=lambda: Slow().fit(X, y))
    worker.start()
    assert started.wait(30)
    run_id = tracker.run_id
    tracker.end_run()
    release.set()
    worker.join(30)
    assert "calls/Slow.fit.jsonl" in read_run(run_id).artifacts()


def test_flush_reentered_on_the_draining_thread_returns_instead_of_deadlocking(store_uri, tmp_path):
    client = MlflowClient(store_uri)
    run_id = client.create_run(client.create_experiment("reentry")).info.run_id
    answers = []

    class Interrupting:
        """Calls flush again from inside log_batch, as a signal handler would."""

        def __getattr__(self, name):
            return getattr(client, name)

        def log_batch(self, *args, **kwargs):
            answers.append(writer.flush())
            return client.log_batch(*args, **kwargs)

    writer = writer_for(Interrupting(), run_id, store_uri, tmp_path)
    writer.log_metric("m", 1.0)
    assert writer.close() is True
    assert answers == [False]
    assert client.get_run(run_id).data.metrics == {"m": 1.0}


def test_forked_child_runs_untracked(make_tracker, read_run):
    tracker = make_tracker()
    pid = os.fork()
    if pid == 0:  # the child: fit, and leave without running any exit hook
        DecisionTreeClassifier(max_depth=7).fit(X, y)
        os._exit(0 if tracker.session.run is None else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    run_id = tracker.run_id
    tracker.end_run()
    assert "DecisionTreeClassifier.max_depth" not in read_run(run_id).params


def test_importing_pypads_leaves_the_matplotlib_backend_alone():
    import subprocess
    import sys

    code = ("import matplotlib; matplotlib.use('svg'); import pypads, pypads.recording.loggers.pipeline; "
            "print(matplotlib.get_backend())")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "svg", result.stderr


def test_runs_leave_no_open_files_behind(make_tracker):
    def deleted_journal_files() -> list[str]:
        links = []
        for descriptor in os.listdir("/proc/self/fd"):
            try:
                links.append(os.readlink(f"/proc/self/fd/{descriptor}"))
            except OSError:  # the listing's own descriptor, closed by now
                continue
        return [link for link in links if "journal" in link and link.endswith("(deleted)")]

    for _ in range(3):
        tracker = make_tracker()
        DecisionTreeClassifier(max_depth=2).fit(X, y)
        tracker.deactivate()
    assert deleted_journal_files() == []


def test_a_write_while_the_run_ends_is_not_lost(store_uri, tmp_path):
    client = MlflowClient(store_uri)
    run_id = client.create_run(client.create_experiment("replaced")).info.run_id
    writer = writer_for(client, run_id, store_uri, tmp_path)
    writer.log_text("model.txt", "small")
    late = threading.Thread(target=lambda: writer.log_file("model.txt", lambda stream: stream.write(b"large" * 300_000)))
    original = client.log_artifacts

    def upload_and_write_meanwhile(*args):
        if not late.is_alive() and late.ident is None:
            late.start()  # another thread writes a larger version while the end uploads
        return original(*args)

    client.log_artifacts = upload_and_write_meanwhile
    assert writer.close() is True
    late.join(30)
    assert RunView(store_uri, run_id).artifact_text("model.txt") == "large" * 300_000


def test_a_large_artifact_staged_while_a_small_one_uploads_is_not_lost(store_uri, tmp_path):
    client = MlflowClient(store_uri)
    run_id = client.create_run(client.create_experiment("replaced")).info.run_id
    writer = writer_for(client, run_id, store_uri, tmp_path)
    writer.log_text("model.txt", "small")
    original = client.log_artifacts
    staged: list[bool] = []

    def upload_and_stage_meanwhile(*args):
        if not staged:  # a larger version of the same artifact is staged during the upload
            staged.append(True)
            stage = threading.Thread(target=lambda: writer.log_file("model.txt", lambda s: s.write(b"large" * 300_000)))
            stage.start()
            stage.join(30)
        return original(*args)

    client.log_artifacts = upload_and_stage_meanwhile
    assert writer.flush() is True
    assert writer.close() is True
    assert RunView(store_uri, run_id).artifact_text("model.txt") == "large" * 300_000


def test_recovering_a_journal_never_moves_its_committed_mark_back(tmp_path):
    from pypads.to_mlflow.journal import JournalReader, JournalWriter
    from pypads.to_mlflow.store import RunTarget, Store

    journal = JournalWriter.create(RunTarget(Store("sqlite:///unused.db", None), "x"), root=tmp_path)
    journal.record({"kind": "metric", "key": "m", "value": 1.0, "timestamp": 0, "step": 0})
    journal.record({"kind": "metric", "key": "m", "value": 2.0, "timestamp": 0, "step": 1})
    journal.close()  # the file cut at its last line
    committed = (journal.folder / "entities.jsonl").stat().st_size
    uploaded = JournalReader(journal.folder)
    uploaded.commit(committed)
    batch = JournalReader(journal.folder).read_new(uploaded.committed())
    assert batch.metrics == [] and batch.offset == committed


def test_metric_values_and_names_reach_mlflow_exactly_as_logged(make_tracker, store_uri):
    # The journal writes metric lines by hand (json.dumps of a dict is too slow for a
    # scoring function in a loop): every float, and every name MLflow takes, must survive.
    tracker = make_tracker()
    values = [0.1, 1 / 3, -2.5e-300, 1e300, 7.0, math.nan, math.inf, -math.inf]
    for step, value in enumerate(values):
        tracker.writer.log_metric("score", value, step=step)
    tracker.writer.log_metric("val/acc ü-1.0", np.float32(0.25), step=np.int64(3))
    run_id = tracker.run_id
    tracker.end_run()
    run = RunView(store_uri, run_id)
    stored = [value for _, value in sorted(run.metric_history("score"), key=lambda point: point[0])]
    assert stored[:5] == values[:5]
    assert math.isnan(stored[5])
    # MLflow's SQL store keeps infinities as the largest floats it can hold
    assert stored[6] > 1e300 and stored[7] < -1e300
    assert run.metric_history("val/acc ü-1.0") == [(3, 0.25)]


@pytest.mark.parametrize(("uri", "local"), [
    ("sqlite:///runs/mlflow.db", True), ("file:///tmp/mlruns", True), ("/tmp/mlruns", True), ("C:\\runs", True),
    ("http://127.0.0.1:5000", False), ("https://mlflow.example.org", False), ("databricks", False),
    ("postgresql://user@db/mlflow", False),
])
def test_the_end_waits_long_for_a_store_on_this_machine_and_briefly_for_a_server(uri, local):
    # A local store is never down but spends seconds creating MLflow's tables on first use.
    from pypads.to_mlflow.store import Store
    from pypads.to_mlflow.timeouts import LOCAL_TIMEOUT, SERVER_TIMEOUT, default_timeout

    store = Store(uri, None)
    assert store.is_local is local
    assert default_timeout(store) == (LOCAL_TIMEOUT if local else SERVER_TIMEOUT)


def test_databricks_is_a_tracking_uri_not_a_folder(tmp_path, monkeypatch):
    from pypads.to_mlflow.store import Store, resolve_store

    monkeypatch.chdir(tmp_path)
    assert resolve_store("databricks") == Store("databricks", None)
    assert list(tmp_path.iterdir()) == []  # no ./databricks/mlflow.db
