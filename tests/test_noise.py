"""Issue 11, item 6: what scikit-learn does inside the script's calls stays out of the
run's params, metrics and artifact folders; system figures are system metrics, and right."""

from __future__ import annotations

import json

import psutil
import pytest
from sklearn import datasets, metrics
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.feature_selection import SelectKBest
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.tree import DecisionTreeClassifier

from pypads import PyPads
from pypads.core.errors import ConfigError

X, y = datasets.load_iris(return_X_y=True)


class Plain:
    """An object with Python's default repr (its address)."""


def refit_strategy(cv_results):
    return int(cv_results["rank_test_score"].argmin())


def test_internal_calls_add_no_params_metrics_or_folders(make_tracker, read_run):
    tracker = make_tracker()
    forest = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    loss = metrics.log_loss(y, forest.predict_proba(X))  # LabelBinarizer inside
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    assert {key.split(".")[0] for key in run.params} == {"RandomForestClassifier"}
    # the script's score, and the training scores pypads computes itself (not scikit-learn's inner calls)
    assert [key for key in run.metrics if not key.startswith("system/") and ".training_" not in key] == [
        "RandomForestClassifier.log_loss_X"]
    assert run.metrics["RandomForestClassifier.log_loss_X"] == loss
    folders = {path.split("/")[1] for path in run.artifacts("calls")}
    assert folders == {"RandomForestClassifier.fit.jsonl", "RandomForestClassifier.predict_proba.jsonl"}
    # ...but they are still in the pipeline's graph
    graph = json.loads(run.artifact_text("pipeline/graph.json"))
    assert sum(node["call"] == "DecisionTreeClassifier.predict_proba" for node in graph["nodes"]) == 20
    assert run.tags["estimator_name"] == "RandomForestClassifier"
    assert run.tags["estimator_class"] == "sklearn.ensemble._forest.RandomForestClassifier"


def test_a_simple_pipeline_graph_holds_only_the_scripts_own_calls(make_tracker, read_run):
    tracker = make_tracker(config={"events": {"pipeline": {"on": ["pypads_fit", "pypads_predict", "pypads_metric"],
                                                           "with": {"pipeline_type": "simple"}},
                                              "metric": {"on": ["pypads_metric"]}}})
    forest = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    metrics.accuracy_score(y, forest.predict(X))
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    graph = json.loads(run.artifact_text("pipeline/graph.json"))
    assert [node["call"] for node in graph["nodes"]] == [
        "RandomForestClassifier.fit", "RandomForestClassifier.predict", "accuracy_score"]
    assert {edge["kind"] for edge in graph["edges"]} == {"order", "data"}
    # the lineage still names the metric by the model whose prediction it scored
    assert "RandomForestClassifier.accuracy_score_X" in run.metrics


def test_a_pipeline_type_other_than_normal_or_simple_is_refused():
    with pytest.raises(ConfigError, match="pipeline_type.*'normal' or 'simple'"):
        PyPads(config={"events": {"pipeline": {"on": ["pypads_fit"], "with": {"pipeline_type": "fancy"}}}})


def test_depth_minus_one_brings_back_every_call(make_tracker, read_run):
    tracker = make_tracker(config={"events": {"parameters": {"on": ["pypads_fit"], "depth": -1}}})
    GridSearchCV(DecisionTreeClassifier(), {"max_depth": [1, 2]}, cv=2).fit(X, y)
    run_id = tracker.run_id
    tracker.end_run()
    params = read_run(run_id).params
    # each fit the search made, as before issue 11
    depths = {value for key, value in params.items() if key.startswith("DecisionTreeClassifier") and key.endswith(".max_depth")}
    assert depths == {"1", "2"}


def test_system_metrics_only_in_system_namespace_and_plausible(make_tracker, read_run):
    tracker = make_tracker()
    DecisionTreeClassifier(max_depth=1).fit(X[:10], y[:10])  # far shorter than a clock tick of psutil
    HistGradientBoostingClassifier(max_iter=30).fit(X, y)  # OpenMP threads: more than one core busy
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    hardware = ("cpu", "rss", "ram", "disk", "seconds")
    assert not [key for key in run.metrics if not key.startswith("system/") and any(word in key for word in hardware)]
    cores = psutil.cpu_count()
    for call in ("DecisionTreeClassifier.fit", "HistGradientBoostingClassifier.fit"):
        assert 0 < run.metrics[f"system/{call}.seconds"] < 60
        assert 0 <= run.metrics[f"system/{call}.cpu_percent"] <= 100 * cores
    assert run.metrics["system/DecisionTreeClassifier.fit.cpu_seconds"] > 0  # not 0 for a short fit


def test_partial_fit_logs_params_once_and_counts_calls(make_tracker, read_run):
    tracker = make_tracker()
    model = SGDClassifier(alpha=0.01, random_state=0)
    for start in range(0, 150, 50):
        model.partial_fit(X[start:start + 50], y[start:start + 50], classes=[0, 1, 2])
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    assert run.params["SGDClassifier.alpha"] == "0.01"
    assert not [key for key in run.params if key.startswith("SGDClassifier_1")]
    assert run.metric_history("SGDClassifier.partial_fit_calls") == [(0, 1.0), (1, 2.0), (2, 3.0)]


def test_params_are_readable_final_and_carry_no_address(make_tracker, read_run):
    tracker = make_tracker()
    pipeline = Pipeline([("log", FunctionTransformer(func=lambda data, marker: data, kw_args={"marker": Plain()})),
                         ("scale", StandardScaler()), ("selectkbest", SelectKBest(k=2)),
                         ("clf", LogisticRegression(max_iter=300))])
    search = GridSearchCV(pipeline, {"selectkbest__k": [2, 3], "clf__C": [0.1, 1.0]}, cv=2, refit=refit_strategy)
    search.fit(X, y)
    run_id = tracker.run_id
    tracker.end_run()
    params = read_run(run_id).params
    assert not [key for key, value in params.items() if "0x" in value], params
    assert params["GridSearchCV.refit"] == "refit_strategy"
    assert params["GridSearchCV.estimator__selectkbest__k"] == "2"  # scikit-learn's own spelling
    assert params["GridSearchCV.estimator__log__func"] == "test_params_are_readable_final_and_carry_no_address.<locals>.<lambda>"
    # the candidates are not param groups of their own
    assert not [key for key in params if key.startswith(("Pipeline", "LogisticRegression", "SelectKBest"))]
