"""Each logger alone, against a writer that records: what it would send to MLflow for a
fit, a prediction and a score, and what it leaves out."""

from __future__ import annotations

from importlib import metadata

import cloudpickle
import numpy as np
from packaging.utils import canonicalize_name
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.tree import DecisionTreeClassifier

from pypads.recording.content.lineage import Origin, lineage
from pypads.recording.loggers import CrossValidation, Datasets, Input, Metric, Model, ModelRuns, Output, Parameters, Search
from pypads.recording.run_loggers.base import RunSettings
from pypads.recording.run_loggers.environment import IPackages
from unit.conftest import call_of, logged

X, y = load_iris(return_X_y=True)
X_train, X_test, y_train, y_test = X[::2], X[1::2], y[::2], y[1::2]
FIT, PREDICT, METRIC = {"pypads_fit"}, {"pypads_predict"}, {"pypads_metric"}


def fit(run, estimator, *loggers, depth=0):
    call = call_of(run, type(estimator).fit, estimator, X_train, y_train, name=f"{type(estimator).__name__}.fit",
                   hooks=FIT, instance=estimator, depth=depth)
    for logger in loggers:
        logged(logger, call)
    return call


def predict_and_score(run, estimator, metric_logger):
    prediction = call_of(run, type(estimator).predict, estimator, X_test, name=f"{type(estimator).__name__}.predict",
                         hooks=PREDICT, instance=estimator)
    # the lineage of the prediction, as the pipeline logger would note it
    lineage(run).produced(prediction.result, Origin(lineage(run).label(estimator), "X_test", False))
    score = call_of(run, accuracy_score, y_test, prediction.result, name="accuracy_score", hooks=METRIC)
    logged(metric_logger, score)
    return score.result


def test_parameters_logs_final_params_under_the_label_and_sets_estimator_tags(run):
    fit(run, DecisionTreeClassifier(max_depth=3, random_state=0), Parameters())
    fit(run, DecisionTreeClassifier(max_depth=5), Parameters())
    assert run.writer.params["DecisionTreeClassifier.max_depth"] == "3"
    assert run.writer.params["DecisionTreeClassifier_1.max_depth"] == "5"
    assert run.writer.tags["estimator_class"] == "sklearn.tree._classes.DecisionTreeClassifier"


def test_parameters_leave_out_calls_made_inside_a_library_only_when_the_event_says_so(run):
    # the depth limit is the event's (LoggerOnEvent.depth); the logger itself logs any call it gets
    fit(run, LogisticRegression(C=0.5, max_iter=300), Parameters(), depth=1)
    assert run.writer.params["LogisticRegression.C"] == "0.5"


def test_metric_is_named_by_model_and_data_and_feeds_the_model_comparison(run):
    tree, linear = DecisionTreeClassifier(random_state=0), LogisticRegression(max_iter=500)
    for estimator in (tree, linear):
        fit(run, estimator, Parameters())
    scores = [predict_and_score(run, estimator, Metric()) for estimator in (tree, linear)]
    assert run.writer.metrics["DecisionTreeClassifier.accuracy_score_X_test"] == [(0, scores[0])]
    assert run.writer.metrics["LogisticRegression.accuracy_score_X_test"] == [(0, scores[1])]

    comparison = ModelRuns()
    comparison.start(run, comparison.options)
    run.ending()
    children = {entry["name"]: entry for entry in run.writer.entries if entry["kind"] == "child_run"}
    assert set(children) == {"DecisionTreeClassifier", "LogisticRegression"}
    [(key, value, _, step, data)] = children["LogisticRegression"]["metrics"]
    assert (key, value, step, data) == ("accuracy_score_X_test", scores[1], 0, "X_test")
    assert children["DecisionTreeClassifier"]["params"]["random_state"] == "0"


def test_one_model_makes_no_child_run(run):
    tree = DecisionTreeClassifier(random_state=0)
    fit(run, tree, Parameters())
    predict_and_score(run, tree, Metric())
    comparison = ModelRuns()
    comparison.start(run, comparison.options)
    run.ending()
    assert not [entry for entry in run.writer.entries if entry["kind"] == "child_run"]


def test_model_pickles_the_fitted_state_once_per_state(run):
    tree = DecisionTreeClassifier(random_state=0)
    model = Model()
    fit(run, tree, model)
    fit(run, tree, model)  # the same state again: nothing new
    (entry,) = [entry for entry in run.writer.entries if entry["kind"] == "model"]
    assert entry["name"] == "DecisionTreeClassifier" and entry["predicts"] is True
    assert entry["input"] == {"kind": "array", "dtype": "float64", "shape": [75, 4]}
    restored = cloudpickle.loads(run.writer.contents[0])
    assert (restored.predict(X_test) == tree.predict(X_test)).all()


def test_datasets_are_logged_once_with_their_context(run):
    datasets = Datasets()
    for estimator in (DecisionTreeClassifier(), LogisticRegression(max_iter=300)):
        fit(run, estimator, datasets)  # the same X_train and y_train twice: one dataset
    entries = [entry for entry in run.writer.entries if entry["kind"] == "dataset"]
    assert len(entries) == 1 and entries[0]["context"] == "training"
    assert entries[0]["profile"] == {"num_rows": 75, "num_elements": 300, "targets_shape": [75]}


def test_input_and_output_write_a_line_per_call_naming_the_data(run):
    tree = DecisionTreeClassifier(random_state=0)
    call = fit(run, tree, Input(), Output())
    (header, inputs, output) = run.writer.lines("calls/DecisionTreeClassifier.fit.jsonl")
    assert header["function"] == "DecisionTreeClassifier.fit"
    assert set(inputs["inputs"]["X"]) == {"dataset", "digest"} and inputs["call"] == output["call"] == call.number
    assert output["output"] == "DecisionTreeClassifier(random_state=0)"


def test_search_logs_best_params_score_table_and_a_child_run_per_candidate(run):
    search = GridSearchCV(DecisionTreeClassifier(random_state=0), {"max_depth": [1, 2, 3]}, cv=3)
    fit(run, search, Search())
    assert run.writer.params["best_max_depth"] == str(search.best_params_["max_depth"])
    assert run.writer.metrics["best_cv_score"] == [(0, search.best_score_)]
    assert run.writer.files["cv_results.csv"].decode().count("\n") == 4  # a header and 3 candidates
    children = [entry for entry in run.writer.entries if entry["kind"] == "child_run"]
    assert len(children) == 3 and children[0]["tags"]["pypads.candidate"] == str(int(np.argmin(search.cv_results_["rank_test_score"])))


def test_cross_validation_logs_each_fold_and_the_mean(run):
    call = call_of(run, cross_val_score, DecisionTreeClassifier(random_state=0), X, y, cv=3, name="cross_val_score",
                   hooks={"pypads_cross_validate"})
    logged(CrossValidation(), call)
    folds = run.writer.metrics["cv_DecisionTreeClassifier_test_score"]
    assert folds == [(fold, score) for fold, score in enumerate(call.result)]
    assert run.writer.metrics["cv_DecisionTreeClassifier_test_score_mean"] == [(0, call.result.mean())]


def test_the_packages_list_every_distribution_with_its_exact_version(run):
    """``environment/requirements.txt`` names each installed distribution once, by its
    canonical name, with the version its metadata gives (read from the folder names)."""
    IPackages().log(run, RunSettings())
    pins = run.writer.files["environment/requirements.txt"].decode().splitlines()
    described = (dist.metadata for dist in metadata.distributions())
    expected = {f"{canonicalize_name(meta['Name'])}=={meta['Version']}" for meta in described if meta["Name"]}
    assert set(pins) == expected and len(pins) == len(expected)
    assert f"scikit-learn=={metadata.version('scikit-learn')}" in pins
