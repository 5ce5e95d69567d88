"""``pypads.results``: a tracked run read back as DataFrames, from a real SQLite store."""

from __future__ import annotations

import pytest
from sklearn import datasets, metrics
from sklearn.model_selection import cross_val_score
from sklearn.tree import DecisionTreeClassifier

from pypads import results
from pypads.recording.defaults import DEFAULT_CONFIG

CALLS = {"on": ["pypads_fit", "pypads_predict", "pypads_metric"], "depth": 0}


@pytest.fixture
def tracked_run(make_tracker):
    """A run that fitted a tree, scored it, cross-validated it, with calls recorded."""
    tracker = make_tracker(name="results", config={"events": {**DEFAULT_CONFIG["events"], "calls": CALLS}})
    X_train, y_train = datasets.load_iris(return_X_y=True)
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X_train, y_train)
    accuracy = metrics.accuracy_score(y_train, model.predict(X_train))
    cross_val_score(DecisionTreeClassifier(max_depth=2, random_state=0), X_train, y_train, cv=3)
    run_id = tracker.run_id
    tracker.deactivate()  # the run ends, and the next tracker starts without a warning
    return run_id, accuracy


def test_params_metrics_and_datasets(tracked_run, store_uri):
    run_id, accuracy = tracked_run
    params = results.params(run_id, uri=store_uri)
    assert list(params.columns) == ["key", "value"]
    assert params.set_index("key").loc["DecisionTreeClassifier.max_depth", "value"] == "2"

    values = results.metrics(run_id, uri=store_uri)
    assert list(values.columns) == ["key", "step", "value", "timestamp"]
    scored = values[values.key == "DecisionTreeClassifier.accuracy_score_X_train"]
    assert scored.value.tolist() == [pytest.approx(accuracy)]
    folds = values[values.key == "cv_DecisionTreeClassifier_test_score"]
    assert folds.step.tolist() == [0, 1, 2]  # a series: one value per fold

    inputs = results.datasets(run_id, uri=store_uri)
    features = inputs[inputs.name == "X_train"].set_index("context")
    assert set(features.index) == {"training", "evaluation"}  # fitted on it, then predicted on it
    assert features.loc["training", "profile"]["num_rows"] == 150


def test_calls_and_pipeline(tracked_run, store_uri):
    run_id, _ = tracked_run
    recorded = results.calls(run_id, uri=store_uri)
    assert list(recorded.columns) == ["function", "call", "duration", "raised", "message"]
    per_function = recorded.groupby("function").call.count().to_dict()
    assert per_function["sklearn.tree._classes.DecisionTreeClassifier.fit"] == 1
    assert per_function["sklearn.tree._classes.DecisionTreeClassifier.predict"] == 1
    assert recorded.raised.isna().all() and (recorded.duration >= 0).all()

    nodes = results.pipeline(run_id, uri=store_uri).set_index("id")
    top = nodes[nodes.depth == 0]
    fit = top[top.call == "DecisionTreeClassifier.fit"].index[0]
    predict = top[top.call == "DecisionTreeClassifier.predict"].index[0]
    score = top[top.call == "accuracy_score"].index[0]
    assert predict in nodes.loc[score, "data_from"]  # the score took the prediction
    edges = results.pipeline_edges(run_id, uri=store_uri)
    assert ((edges["from"] == fit) & (edges.kind == "order")).any()


def test_runs_lists_newest_first_with_metrics_and_params(tracked_run, store_uri):
    run_id, accuracy = tracked_run
    found = results.runs(experiment="results", uri=store_uri)
    assert found.run_id.tolist() == [run_id]
    row = found.iloc[0]
    assert row.status == "FINISHED" and row.experiment == "results"
    assert row["metrics.DecisionTreeClassifier.accuracy_score_X_train"] == pytest.approx(accuracy)
    assert row["params.DecisionTreeClassifier.max_depth"] == "2"
    assert row.start_time <= row.end_time


def test_what_is_not_there_is_one_clear_error(tracked_run, store_uri, make_tracker):
    with pytest.raises(results.ResultsError, match="no run '0{32}' in sqlite:///"):
        results.params("0" * 32, uri=store_uri)
    with pytest.raises(results.ResultsError, match="no experiment 'nope' .* \\(experiments: .*'results'"):
        results.runs(experiment="nope", uri=store_uri)
    tracker = make_tracker(name="plain")  # default events: no call database
    plain = tracker.run_id
    tracker.deactivate()
    with pytest.raises(results.ResultsError, match=f"run {plain} has no call database"):
        results.calls(plain, uri=store_uri)
    with pytest.raises(results.ResultsError, match=f"run {plain} has no pipeline/graph.json"):
        results.pipeline(plain, uri=store_uri)


def test_system_run_info_and_models(tracked_run, store_uri):
    import platform

    run_id, _ = tracked_run
    facts = results.system(run_id, uri=store_uri)
    assert set(facts) >= {"pseudonymized", "system", "cpu", "memory", "disk", "process", "network"}
    assert facts["system"]["python"] == platform.python_version() and facts["pseudonymized"] is False
    assert "schema" not in facts and "provenance" not in facts
    info = results.run_info(run_id, uri=store_uri)
    assert info["status"] == "FINISHED" and info["experiment"] == "results" and info["duration"] > 0
    assert info["parent_run_id"] is None and info["child_runs"] == []
    assert info["tags"]["pypads.python"] == platform.python_version()
    found = results.models(run_id, uri=store_uri)
    assert list(found["name"]) == ["DecisionTreeClassifier"] and list(found["source_run_id"]) == [run_id]
