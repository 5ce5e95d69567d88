"""What a user sees in MLflow after tracking scikit-learn with the default mappings."""

from __future__ import annotations

import ast
import inspect
import json
import pickle
import time

import numpy as np
import pytest
from sklearn import datasets, metrics
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score  # bound by name before PyPads(): must still be tracked
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

X, y = datasets.load_iris(return_X_y=True)


def test_issue_example_logs_params_artifacts_and_metric(make_tracker, read_run):
    tracker = make_tracker()
    model = DecisionTreeClassifier(max_depth=3).fit(X, y)
    accuracy = metrics.accuracy_score(y, model.predict(X))
    run_id = tracker.run_id
    tracker.end_run()

    run = read_run(run_id)
    assert run.status == "FINISHED"
    assert run.params["DecisionTreeClassifier.max_depth"] == "3"
    # issue 11: the series says which model was scored and on which data (the variable X)
    assert run.metrics["DecisionTreeClassifier.accuracy_score_X"] == pytest.approx(accuracy)
    files = run.artifacts()
    assert "calls/DecisionTreeClassifier.fit.jsonl" in files and "calls/DecisionTreeClassifier.predict.jsonl" in files
    _, given, result = [json.loads(line) for line in run.artifact_text("calls/DecisionTreeClassifier.fit.jsonl").splitlines()]
    assert result["output"] == "DecisionTreeClassifier(max_depth=3)"
    assert set(given["inputs"]["X"]) == {"dataset", "digest"}  # the data is named, not copied
    assert any(key.startswith("system/DecisionTreeClassifier.fit.cpu") for key in run.metrics)


def test_metric_steps_count_calls_and_non_float_results_become_artifacts(make_tracker, read_run):
    tracker = make_tracker()
    predicted = DecisionTreeClassifier(random_state=0).fit(X, y).predict(X)
    for _ in range(3):
        metrics.accuracy_score(y, predicted)
    matrix = metrics.confusion_matrix(y, predicted)
    run_id = tracker.run_id
    tracker.end_run()

    run = read_run(run_id)
    assert [step for step, _ in run.metric_history("DecisionTreeClassifier.accuracy_score_X")] == [0, 1, 2]
    path = "metrics/DecisionTreeClassifier.confusion_matrix_X/0.txt"
    assert run.artifact_text(path) == "[[50, 0, 0],\n [0, 50, 0],\n [0, 0, 50]]"
    assert (np.array(ast.literal_eval(run.artifact_text(path))) == matrix).all()


def test_a_value_computed_once_is_at_step_0_and_stamped_when_computed(make_tracker, read_run):
    tracker = make_tracker()
    model = DecisionTreeClassifier(random_state=0).fit(X, y)
    computed = time.time() * 1000
    metrics.accuracy_score(y, model.predict(X))
    time.sleep(1.0)  # the run is uploaded after this: a metric stamped at upload would be late
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    [score] = run.client.get_metric_history(run_id, "DecisionTreeClassifier.accuracy_score_X")
    assert score.step == 0 and computed - 1 <= score.timestamp <= computed + 500
    for key in ("seconds", "cpu_seconds", "rss_mb"):
        [figure] = run.client.get_metric_history(run_id, f"system/DecisionTreeClassifier.fit.{key}")
        assert figure.step == 0 and figure.timestamp <= computed + 1


def test_function_imported_by_name_before_pypads_is_tracked(make_tracker, read_run):
    tracker = make_tracker()
    # `f1_score` was imported at the top of this module, before PyPads() existed.
    assert globals()["f1_score"] is metrics.f1_score
    value = f1_score(y, y, average="macro")
    run_id = tracker.run_id
    tracker.end_run()
    history = read_run(run_id).metric_history("f1_score_y")  # no model: named by its data
    assert history == [(0, value)]
    # f1_score computes fbeta_score internally: an implementation detail, not a second metric
    assert not [key for key in read_run(run_id).metrics if "fbeta_score" in key]


def test_second_fit_with_other_values_gets_its_own_param_names(make_tracker, read_run):
    tracker = make_tracker()
    first = DecisionTreeClassifier(max_depth=2)
    first.fit(X, y)
    first.fit(X, y)  # the same estimator, the same values: nothing new
    # issue 11: another estimator of the class is another model, with params of its own
    DecisionTreeClassifier(max_depth=5).fit(X, y)
    run_id = tracker.run_id
    tracker.end_run()
    params = read_run(run_id).params
    assert params["DecisionTreeClassifier.max_depth"] == "2"
    assert params["DecisionTreeClassifier_1.max_depth"] == "5"
    assert "DecisionTreeClassifier_2.max_depth" not in params


def test_pipeline_tracks_its_steps(make_tracker, read_run):
    tracker = make_tracker()
    pipeline = Pipeline([("scale", StandardScaler()), ("clf", LogisticRegression(max_iter=500))])
    pipeline.fit(X, y)
    pipeline.predict(X)
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    # issue 11: the steps' params are the pipeline's own, as get_params(deep=True) spells them
    assert run.params["Pipeline.clf__max_iter"] == "500"
    assert "Pipeline.scale__with_mean" in run.params
    assert not [key for key in run.params if key.startswith(("LogisticRegression.", "StandardScaler."))]
    calls = sorted(path.split("/")[1].removesuffix(".jsonl") for path in run.artifacts("calls"))
    # issue 11: the calls the pipeline makes inside are in its graph, not folders of their own
    assert calls == ["Pipeline.fit", "Pipeline.predict"]


def test_grid_search_logs_its_own_params_not_each_candidate(make_tracker, read_run):
    tracker = make_tracker()
    search = GridSearchCV(DecisionTreeClassifier(random_state=0), {"max_depth": [1, 2, 3]}, cv=2)
    search.fit(X, y)
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    # issue 11: the candidates are internal fits (the search's results say how they did)
    assert not [key for key in run.params if key.startswith("DecisionTree")]
    assert run.params["GridSearchCV.estimator__random_state"] == "0"
    assert run.params["GridSearchCV.cv"] == "2"
    assert run.tags.get("pypads.failure.Parameters") is None


def test_modules_imported_after_pypads_are_patched_on_import(make_tracker, read_run, monkeypatch):
    import sys

    import sklearn

    # The original modules come back afterwards: other tests hold (and pickle) their classes.
    monkeypatch.setattr(sklearn, "cluster", sklearn.cluster)
    for name in [name for name in sys.modules if name.startswith("sklearn.cluster")]:
        monkeypatch.delitem(sys.modules, name)
    tracker = make_tracker()
    from sklearn.cluster import KMeans  # imported (again) after PyPads()

    KMeans(n_clusters=2, n_init=1, random_state=0).fit(X)
    run_id = tracker.run_id
    tracker.end_run()
    assert read_run(run_id).params["KMeans.n_clusters"] == "2"


def test_user_subclass_defined_after_pypads_is_tracked(make_tracker, read_run):
    tracker = make_tracker()

    class ShallowTree(DecisionTreeClassifier):
        def fit(self, X, y, sample_weight=None, check_input=True):
            return super().fit(X, y, sample_weight=sample_weight, check_input=check_input)

    ShallowTree(max_depth=1).fit(X, y)
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    assert run.params["ShallowTree.max_depth"] == "1"
    assert "calls/ShallowTree.fit.jsonl" in run.artifacts()


def test_patched_methods_keep_identity_signature_pickle_and_hasattr(make_tracker):
    before = {
        "signature": inspect.signature(DecisionTreeClassifier.fit),
        "doc": DecisionTreeClassifier.fit.__doc__,
        "svc_proba": hasattr(SVC(), "predict_proba"),
        "pipe_proba": hasattr(Pipeline([("svc", SVC())]), "predict_proba"),
    }
    make_tracker()
    assert DecisionTreeClassifier.fit.__name__ == "fit"
    assert DecisionTreeClassifier.fit.__qualname__.endswith("fit")
    assert DecisionTreeClassifier.fit.__doc__ == before["doc"]
    assert inspect.signature(DecisionTreeClassifier.fit) == before["signature"]
    assert inspect.signature(f1_score).parameters.keys() >= {"y_true", "y_pred", "average"}
    assert hasattr(SVC(), "predict_proba") == before["svc_proba"] is False
    assert hasattr(Pipeline([("svc", SVC())]), "predict_proba") == before["pipe_proba"] is False
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    assert vars(model).keys() == vars(DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)).keys()
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict(X), model.predict(X))
    assert clone(model).get_params() == model.get_params()
    assert pickle.loads(pickle.dumps(metrics.accuracy_score)) is metrics.accuracy_score


def _own_attribute(cls, name):
    """The raw class-dict entry (an ``available_if`` descriptor, say) behind ``cls.name``."""
    return next(vars(klass)[name] for klass in cls.__mro__ if name in vars(klass))


def test_deactivate_restores_the_identical_originals(make_tracker):
    import sklearn.base
    import sklearn.metrics._classification as classification

    originals = {
        "fit": vars(DecisionTreeClassifier)["fit"],
        "accuracy_code": metrics.accuracy_score.__code__,
        "f1_code": f1_score.__code__,
        "init_subclass": vars(sklearn.base.BaseEstimator).get("__init_subclass__"),
        "svc_predict_proba": _own_attribute(SVC, "predict_proba"),
        "pipeline_fit_transform": vars(Pipeline).get("fit_transform"),
    }
    accuracy_score = metrics.accuracy_score
    tracker = make_tracker()
    assert vars(DecisionTreeClassifier)["fit"] is not originals["fit"]
    # functions are tracked in place: the very same objects, with other code
    assert metrics.accuracy_score is accuracy_score is classification.accuracy_score
    assert metrics.accuracy_score.__code__ is not originals["accuracy_code"]
    assert f1_score.__code__ is not originals["f1_code"]
    tracker.deactivate()
    assert vars(DecisionTreeClassifier)["fit"] is originals["fit"]
    assert metrics.accuracy_score is accuracy_score
    assert metrics.accuracy_score.__code__ is originals["accuracy_code"]
    assert f1_score.__code__ is originals["f1_code"]
    assert "__wrapped__" not in vars(f1_score) or f1_score.__wrapped__.__name__ == "f1_score"
    assert vars(sklearn.base.BaseEstimator).get("__init_subclass__") is originals["init_subclass"]
    assert _own_attribute(SVC, "predict_proba") is originals["svc_predict_proba"]
    assert vars(Pipeline).get("fit_transform") is originals["pipeline_fit_transform"]
    import builtins

    assert not hasattr(builtins, "__pypads_dispatch__")


def test_scorers_and_fitted_searches_still_pickle(make_tracker, tmp_path):
    import joblib
    from sklearn.metrics import get_scorer

    make_tracker()
    scorer = get_scorer("accuracy")  # built by sklearn at import, holding accuracy_score
    assert pickle.loads(pickle.dumps(scorer))._score_func is metrics.accuracy_score
    search = GridSearchCV(DecisionTreeClassifier(random_state=0), {"max_depth": [1, 2]}, cv=2).fit(X, y)
    joblib.dump(search, tmp_path / "search.joblib")
    np.testing.assert_array_equal(joblib.load(tmp_path / "search.joblib").predict(X), search.predict(X))
    assert pickle.loads(pickle.dumps({"metric": metrics.f1_score}))["metric"] is metrics.f1_score


def test_calls_after_end_run_are_untracked_and_unharmed(make_tracker, read_run):
    tracker = make_tracker()
    run_id = tracker.run_id
    tracker.end_run()
    assert tracker.run_id is None
    model = DecisionTreeClassifier(max_depth=4).fit(X, y)
    assert metrics.accuracy_score(y, model.predict(X)) > 0.9
    assert "DecisionTreeClassifier.max_depth" not in read_run(run_id).params


def test_context_manager_ends_the_run(store_uri, read_run):
    from pypads import PyPads

    with PyPads(uri=store_uri, name="ctx") as tracker:
        run_id = tracker.run_id
        DecisionTreeClassifier().fit(X, y)
    assert read_run(run_id).status == "FINISHED"
    assert isinstance(vars(DecisionTreeClassifier)["fit"], type(lambda: 0))
    assert "DecisionTreeClassifier.criterion" in read_run(run_id).params


def test_array_params_are_summarised_and_variants_are_capped(make_tracker, read_run):
    from sklearn.linear_model import LassoLars

    tracker = make_tracker(config={"events": {"parameters": {"on": ["pypads_fit"], "with": {"max_variants": 2}}}})
    for alpha in (0.1, 0.2, 0.3):
        LassoLars(alpha=alpha, precompute=X.T @ X).fit(X, y)
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    assert run.params["LassoLars.precompute"] == "<ndarray shape=(4, 4) dtype=float64>"
    assert run.params["LassoLars_1.alpha"] == "0.2"
    assert "LassoLars_2.alpha" not in run.params
    assert "more than 2 parameter variants" in run.tags["pypads.parameters.LassoLars"]


def test_deactivate_restores_the_tracking_uri(make_tracker):
    import os

    import mlflow

    before = (mlflow.get_tracking_uri(), os.environ.get("MLFLOW_TRACKING_URI"))
    make_tracker().deactivate()
    assert (mlflow.get_tracking_uri(), os.environ.get("MLFLOW_TRACKING_URI")) == before


def test_pipeline_graph_has_nodes_and_data_edges(make_tracker, read_run, tmp_path):
    import json

    tracker = make_tracker()
    pipeline = Pipeline([("scale", StandardScaler()), ("clf", LogisticRegression(max_iter=500))]).fit(X, y)
    metrics.accuracy_score(y, pipeline.predict(X))
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    graph = json.loads(run.artifact_text("pipeline/graph.json"))
    calls = {node["id"]: node["call"] for node in graph["nodes"]}
    # partial_fit is hooked since issue 11: StandardScaler.fit is made of one
    assert [calls[i] for i in sorted(calls)][:6] == [
        "Pipeline.fit", "StandardScaler.fit_transform", "StandardScaler.fit", "StandardScaler.partial_fit",
        "StandardScaler.transform", "LogisticRegression.fit"
    ]
    data = {(calls[edge["from"]], calls[edge["to"]], edge["argument"]) for edge in graph["edges"] if edge["kind"] == "data"}
    assert ("StandardScaler.fit_transform", "LogisticRegression.fit", "X") in data
    assert ("Pipeline.fit", "Pipeline.predict", "instance") in data
    assert ("Pipeline.predict", "accuracy_score", "y_pred") in data
    assert ("StandardScaler.transform", "LogisticRegression.predict", "X") in data
    picture = open(run.client.download_artifacts(run_id, "pipeline/graph.svg", str(tmp_path))).read()
    assert picture.startswith("<svg ") and picture.rstrip().endswith("</svg>")
    # the script's story: its own calls as boxes, scikit-learn's calls inside them folded in
    assert ">Pipeline.</tspan>" in picture and ">accuracy_score</tspan>" in picture
    assert "StandardScaler" not in picture and "inside)</tspan>" in picture


def test_pipeline_keeps_max_calls_as_nodes_and_counts_the_rest(make_tracker, read_run):
    import json

    from pypads.core.schemas import PIPELINE_GRAPH, validate
    from pypads.recording.content.picture import summarize

    tracker = make_tracker(config={"events": {"pipeline": {"on": ["pypads_fit", "pypads_predict", "pypads_metric"],
                                                           "with": {"max_calls": 3}}}})
    model = DecisionTreeClassifier(max_depth=2).fit(X, y)
    for _ in range(40):  # a scoring loop: nodes for the first calls only, a count for the rest
        metrics.accuracy_score(y, model.predict(X))
    run_id = tracker.run_id
    tracker.end_run()
    graph = json.loads(read_run(run_id).artifact_text("pipeline/graph.json"))
    validate(graph, PIPELINE_GRAPH)
    assert [node["call"] for node in graph["nodes"]] == [
        "DecisionTreeClassifier.fit", "DecisionTreeClassifier.predict", "accuracy_score"]
    assert {(place["call"], place["count"]) for place in graph["omitted"]} == {
        ("DecisionTreeClassifier.predict", 39), ("accuracy_score", 39)}
    assert all(edge["from"] <= 3 and edge["to"] <= 3 for edge in graph["edges"])
    boxes, _ = summarize(graph["nodes"], graph["omitted"])  # what the picture shows
    assert {box["call"]: box["count"] for box in boxes} == {
        "DecisionTreeClassifier.fit": 1, "DecisionTreeClassifier.predict": 40, "accuracy_score": 40}
