"""Issue 11, item 3: each score in a series that says which model and which data."""

from __future__ import annotations

import pytest
from sklearn import datasets, metrics
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV, cross_validate, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

X, y = datasets.load_iris(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)


def test_train_test_and_fold_scores_are_separate_series(make_tracker, read_run):
    tracker = make_tracker()
    search = GridSearchCV(DecisionTreeClassifier(random_state=0), {"max_depth": [1, 2, 3]}, cv=2).fit(X_train, y_train)
    test = metrics.accuracy_score(y_test, search.predict(X_test))
    train = metrics.accuracy_score(y_train, search.predict(X_train))
    folds = cross_validate(DecisionTreeClassifier(random_state=0), X, y, cv=3, scoring="accuracy", return_train_score=True)
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    assert run.metric_history("GridSearchCV.accuracy_score_X_test") == [(0, pytest.approx(test))]
    assert run.metric_history("GridSearchCV.accuracy_score_X_train") == [(0, pytest.approx(train))]
    # the search's own scoring: 3 candidates x 2 folds, in the order scikit-learn ran them
    fold_scores = run.metric_history("GridSearchCV.fit/test_accuracy_score")
    assert [step for step, _ in fold_scores] == [0, 1, 2, 3, 4, 5]
    expected = [search.cv_results_[f"split{fold}_test_score"][candidate] for candidate in range(3) for fold in range(2)]
    assert [value for _, value in fold_scores] == pytest.approx(expected)
    # cross_validate's test and train folds apart, step = the fold, once (CrossValidation's
    # series from its result; the scores computed inside it are not logged a second time)
    cv = "cv_DecisionTreeClassifier"
    assert run.metric_history(f"{cv}_test_score") == [(fold, pytest.approx(score)) for fold, score in enumerate(folds["test_score"])]
    assert run.metric_history(f"{cv}_train_score") == [(fold, pytest.approx(score)) for fold, score in enumerate(folds["train_score"])]
    assert not [key for key in run.metrics if "cross_validate" in key]
    assert not [key for key in run.metrics if key.split("/")[-1] == "accuracy_score"]  # no bare, mixed series


def test_two_models_in_one_script_never_share_a_series(make_tracker, read_run):
    Xr, yr = datasets.load_diabetes(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(Xr, yr, random_state=0)
    tracker = make_tracker()
    small = RandomForestRegressor(n_estimators=3, random_state=0).fit(X_tr, y_tr)
    large = RandomForestRegressor(n_estimators=8, random_state=0).fit(X_tr, y_tr)
    ridge = Ridge().fit(X_tr, y_tr)
    scores = {}
    for label, model in (("RandomForestRegressor", small), ("RandomForestRegressor_1", large), ("Ridge", ridge)):
        for _ in range(2):  # a loop: the same series again, the next step
            scores[label] = metrics.r2_score(y_te, model.predict(X_te))
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    for label, score in scores.items():
        assert run.metric_history(f"{label}.r2_score_X_te") == [(0, pytest.approx(score)), (1, pytest.approx(score))]
    # the params of each model under the same label as its scores
    assert run.params["RandomForestRegressor.n_estimators"] == "3"
    assert run.params["RandomForestRegressor_1.n_estimators"] == "8"
    assert "Ridge.alpha" in run.params


def test_probabilities_text_and_unknown_models(make_tracker, read_run):
    tracker = make_tracker()
    forest = RandomForestClassifier(n_estimators=5, random_state=0).fit(X_train, y_train)
    auc = metrics.roc_auc_score(y_test == 2, forest.predict_proba(X_test)[:, 2])  # a view of the prediction
    report = metrics.classification_report(y_test, forest.predict(X_test))
    as_dict = metrics.classification_report(y_test, forest.predict(X_test), output_dict=True)
    plain = metrics.accuracy_score(y_test, y_test)  # no tracked prediction: named by its data
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    assert run.metrics["RandomForestClassifier.roc_auc_score_X_test"] == pytest.approx(auc)
    assert run.metrics["accuracy_score_y_test"] == plain
    folder = "metrics/RandomForestClassifier.classification_report_X_test"
    assert run.artifact_text(f"{folder}/0.txt") == report  # the text itself, not its repr()
    assert '"macro avg"' in run.artifact_text(f"{folder}/1.json") and as_dict["accuracy"] > 0.5


def test_score_of_a_pipeline_or_a_search_is_the_outer_models(make_tracker, read_run):
    # pipeline.score() runs its steps' transform and predict for it: the prediction, and
    # the accuracy computed on it, are the pipeline's, not its inner classifier's
    tracker = make_tracker()
    pipeline = make_pipeline(StandardScaler(), LogisticRegression()).fit(X_train, y_train)
    other = make_pipeline(StandardScaler(), DecisionTreeClassifier(max_depth=2, random_state=0)).fit(X_train, y_train)
    search = GridSearchCV(DecisionTreeClassifier(random_state=0), {"max_depth": [1, 3]}, cv=2).fit(X_train, y_train)
    mine = LogisticRegression(C=0.5).fit(X_train, y_train)  # the script's own, after the pipeline's
    scores = (pipeline.score(X_test, y_test), other.score(X_test, y_test), search.score(X_test, y_test),
              mine.score(X_test, y_test))
    # the script calling a step itself scores the step, not the pipeline (on unscaled data)
    step = metrics.accuracy_score(y_test, pipeline[-1].predict(X_test))
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    # named by the data the script gave score(), which the steps transformed before predicting
    assert run.metric_history("Pipeline.accuracy_score_X_test") == [(0, pytest.approx(scores[0]))]
    assert run.metric_history("Pipeline_1.accuracy_score_X_test") == [(0, pytest.approx(scores[1]))]
    assert run.metric_history("GridSearchCV.accuracy_score_X_test") == [(0, pytest.approx(scores[2]))]
    # the pipeline's step took no label: the script's own LogisticRegression is the first
    assert run.metric_history("LogisticRegression.accuracy_score_X_test") == [(0, pytest.approx(scores[3]))]
    assert run.params["LogisticRegression.C"] == "0.5"
    assert run.metric_history("LogisticRegression_1.accuracy_score_X_test") == [(0, pytest.approx(step))]
    assert not [key for key in run.metrics if key.startswith("DecisionTreeClassifier")]
