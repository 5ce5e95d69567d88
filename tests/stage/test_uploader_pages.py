"""The uploader's end of a run that compares two models, from a journal written as the
script writes it, into a real SQLite store: each child run gets its datasets, params,
training scores, pictures and end."""

from __future__ import annotations

import io
import pickle
from pathlib import Path

import numpy as np
from mlflow.tracking import MlflowClient
from sklearn.datasets import load_iris
from sklearn.tree import DecisionTreeClassifier

from pypads.to_mlflow.journal import JournalWriter
from pypads.to_mlflow.store import RunTarget, Store
from pypads.to_mlflow.uploader.uploading import Uploader


def journal_of_two_trees(tmp_path: Path, store_uri: str) -> Path:
    X, y = load_iris(return_X_y=True)
    writer = JournalWriter.create(RunTarget(Store(store_uri, tmp_path / "artifacts"), "pages"), tmp_path / "journal")
    writer.record_entry({"kind": "dataset", "name": "X", "digest": "0" * 16, "source": "X", "context": "training", "profile": {},
                         "schema": None, "columns": None})
    for label, depth in (("shallow", 1), ("deep", None)):
        tree = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y)
        buffer = io.BytesIO()
        np.savez(buffer, y_true=y, y_pred=tree.predict(X), scores=tree.predict_proba(X), classes=tree.classes_)
        writer.record_entry({"kind": "evaluation", "label": label, "task": "classifier", "prefix": "training",
                             "timestamp": 1000, "default_score": "classifier", "data": "X"}, buffer.getvalue())
        writer.record_entry({"kind": "model", "key": label, "name": label, "module": "sklearn.tree._classes",
                             "label": label, "input": None, "output": None, "predicts": True, "params": {},
                             "tags": {"estimator_name": "DecisionTreeClassifier"}}, pickle.dumps(tree))
    for label, depth in (("shallow", "1"), ("deep", "None")):
        writer.record_entry({"kind": "child_run", "name": label, "model_label": label, "params": {"max_depth": depth},
                             "datasets": [["X", "training"]], "metrics": [], "start_time": 1000, "end_time": 2000,
                             "tags": {"pypads.model": label}})
    writer.close()
    return writer.folder


def test_each_child_run_gets_its_datasets_params_training_scores_pictures_and_end(tmp_path, store_uri):
    uploader = Uploader(journal_of_two_trees(tmp_path, store_uri))
    assert uploader.finish("FINISHED")

    client = MlflowClient(store_uri)
    parent = client.get_run(uploader.run_id)
    children = {run.info.run_name: run for run in client.search_runs(
        [parent.info.experiment_id], f"tags.mlflow.parentRunId = '{uploader.run_id}'")}
    assert set(children) == {"shallow", "deep"}
    for label, child in children.items():
        assert child.info.status == "FINISHED" and child.info.end_time == 2000
        assert child.data.params == {"max_depth": "1" if label == "shallow" else "None"}
        assert "training_accuracy_score" in child.data.metrics
        assert [dataset.dataset.name for dataset in child.inputs.dataset_inputs] == ["X"]
        assert "training_confusion_matrix.png" in {item.path for item in client.list_artifacts(child.info.run_id)}


def test_the_run_is_whole_before_its_pictures_and_they_come_after(tmp_path, store_uri):
    # The script waits for end() only: by then the run is FINISHED with its scores and models.
    uploader = Uploader(journal_of_two_trees(tmp_path, store_uri))
    assert uploader.end("FINISHED")
    client = MlflowClient(store_uri)
    parent = client.get_run(uploader.run_id)
    assert parent.info.status == "FINISHED"
    children = client.search_runs([parent.info.experiment_id], f"tags.mlflow.parentRunId = '{uploader.run_id}'")
    assert all("training_accuracy_score" in child.data.metrics for child in children)
    assert len(client.search_logged_models([parent.info.experiment_id])) == 2
    assert not any(item.path.endswith(".png") for child in children for item in client.list_artifacts(child.info.run_id))

    assert uploader.send_pictures()
    for child in children:
        assert "training_confusion_matrix.png" in {item.path for item in client.list_artifacts(child.info.run_id)}
    assert not uploader.journal.folder.exists()


def test_an_uploader_that_died_drawing_leaves_a_recovery_nothing_to_send_twice(tmp_path, store_uri):
    folder = journal_of_two_trees(tmp_path, store_uri)
    first = Uploader(folder)
    assert first.end("FINISHED")  # then it dies: send_pictures() never runs
    assert folder.exists()

    assert Uploader(folder).finish("KILLED", only_if_running=True)
    client = MlflowClient(store_uri)
    parent = client.get_run(first.run_id)
    assert parent.info.status == "FINISHED"
    assert len(client.search_logged_models([parent.info.experiment_id])) == 2  # not saved again
    assert len(client.search_runs([parent.info.experiment_id])) == 3  # nor the child runs
    assert not folder.exists()


def test_a_chart_entry_is_drawn_onto_its_models_page_and_a_hostile_one_writes_nothing(tmp_path, store_uri):
    writer = JournalWriter.create(RunTarget(Store(store_uri, tmp_path / "artifacts"), "charts"), tmp_path / "journal")
    table = b"feature,split,gain\nage,3,10.5\nbmi,9,40.0\n"
    writer.record_entry({"kind": "chart", "label": "Booster", "name": "feature_importance", "column": "gain"}, table)
    # Hand-written lines: a label leaving the run, a name with a path, a column the table lacks.
    writer.record_entry({"kind": "chart", "label": "../../escaped", "name": "x", "column": "gain"}, table)
    writer.record_entry({"kind": "chart", "label": "Other", "name": "../../../escaped", "column": "gain"}, table)
    writer.record_entry({"kind": "chart", "label": "Third", "name": "importance", "column": "cover"}, table)
    writer.close()
    uploader = Uploader(writer.folder)
    assert uploader.finish("FINISHED")

    client = MlflowClient(store_uri)
    run = client.get_run(uploader.run_id)
    files = sorted(item.path for folder in client.list_artifacts(run.info.run_id)
                   for item in (client.list_artifacts(run.info.run_id, folder.path) if folder.is_dir else [folder]))
    assert files == ["Booster/feature_importance.png", "Other/escaped.png"]  # a name is a file name, never a path
    assert not list(tmp_path.rglob("x.png"))  # the leaving label's picture is nowhere
    assert [path.parent.name for path in tmp_path.rglob("escaped*")] == ["Other"]
    failure = run.data.tags["pypads.failure.pictures"]
    assert "'../../escaped'" in failure and "Third: importance.png: failed" in failure and "'cover'" in failure
