"""A model's training scores and pictures (pypads.to_mlflow.evaluation), from real scikit-learn
models on scikit-learn's bundled datasets: the values equal sklearn.metrics' own, the
pictures are small valid PNGs, bad data gives warnings rather than exceptions, and the
user's pyplot is left as it was."""

from __future__ import annotations

import csv
import functools
import io
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics
from sklearn.cluster import KMeans
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, make_blobs
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier

from pypads.to_mlflow.evaluation import Evaluation, estimator_html, importances, pictures, scores, table_chart
from pypads.to_mlflow.evaluation.importance import ranked_rows

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def assert_pictures(files, names):
    import matplotlib.image

    assert sorted(files) == sorted(names)
    for name, content in files.items():
        assert content.startswith(PNG_MAGIC), name
        assert len(content) <= 200_000, (name, len(content))
        assert matplotlib.image.imread(io.BytesIO(content), format="png").ndim == 3, name


@functools.cache
def iris_model():
    """Fitted once: the machine running the tests may be busy, and fits are the slow part here."""
    X, y = load_iris(return_X_y=True)
    return LogisticRegression(max_iter=1000).fit(X, y), X, y


@functools.cache
def cancer_model():
    X, y = load_breast_cancer(return_X_y=True)
    return make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y), X, y


def classified(model, X, y):
    return Evaluation("classifier", y, model.predict(X), model.predict_proba(X), model.classes_, score=model.score(X, y))


def test_a_multi_class_model_gets_autologs_metrics_weighted_over_its_classes():
    model, X, y = iris_model()
    predicted, probabilities = model.predict(X), model.predict_proba(X)
    values, warnings = scores(classified(model, X, y))
    assert warnings == []
    assert values == pytest.approx({
        "accuracy_score": metrics.accuracy_score(y, predicted),
        "precision_score": metrics.precision_score(y, predicted, average="weighted", zero_division=0),
        "recall_score": metrics.recall_score(y, predicted, average="weighted", zero_division=0),
        "f1_score": metrics.f1_score(y, predicted, average="weighted", zero_division=0),
        "log_loss": metrics.log_loss(y, probabilities, labels=model.classes_),
        "roc_auc": metrics.roc_auc_score(y, probabilities, multi_class="ovr", average="weighted"),
        "score": model.score(X, y),
    }, rel=1e-12)
    files, warnings = pictures(classified(model, X, y), "LogisticRegression")
    assert warnings == []
    assert_pictures(files, ["LogisticRegression_confusion_matrix.png", "LogisticRegression_roc_curve.png",
                            "LogisticRegression_precision_recall_curve.png"])


def test_a_binary_model_scores_its_second_class_as_the_positive_one():
    model, X, y = cancer_model()
    predicted, probabilities = model.predict(X), model.predict_proba(X)
    values, warnings = scores(classified(model, X, y))
    assert warnings == []
    assert values["precision_score"] == pytest.approx(metrics.precision_score(y, predicted, pos_label=1))
    assert values["recall_score"] == pytest.approx(metrics.recall_score(y, predicted, pos_label=1))
    assert values["f1_score"] == pytest.approx(metrics.f1_score(y, predicted, pos_label=1))
    assert values["log_loss"] == pytest.approx(metrics.log_loss(y, probabilities))
    assert values["roc_auc"] == pytest.approx(metrics.roc_auc_score(y, probabilities[:, 1]))


def test_a_decision_function_gives_roc_auc_but_no_log_loss():
    X, y = load_breast_cancer(return_X_y=True)
    model = make_pipeline(StandardScaler(), LinearSVC()).fit(X, y)
    margins = model.decision_function(X)
    evaluation = Evaluation("classifier", y, model.predict(X), margins, model.classes_)
    values, warnings = scores(evaluation)
    assert warnings == [] and "log_loss" not in values
    assert values["roc_auc"] == pytest.approx(metrics.roc_auc_score(y, margins))
    files, warnings = pictures(evaluation, "svc")
    assert warnings == []
    assert_pictures(files, ["svc_confusion_matrix.png", "svc_roc_curve.png", "svc_precision_recall_curve.png"])


@pytest.mark.parametrize("labels", [np.array(["malignant", "benign"]), np.array([False, True])], ids=["strings", "bools"])
def test_string_and_bool_labels_in_pandas_series_work(labels):
    X, codes = load_breast_cancer(return_X_y=True)
    y = pd.Series(labels[codes], name="diagnosis")
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    predicted = pd.Series(model.predict(X))
    evaluation = Evaluation("classifier", y, predicted, model.predict_proba(X), model.classes_)
    values, warnings = scores(evaluation)
    assert warnings == []
    positive = model.classes_[1]
    assert values["f1_score"] == pytest.approx(metrics.f1_score(y, predicted, pos_label=positive))
    assert values["roc_auc"] == pytest.approx(metrics.roc_auc_score(y == positive, model.predict_proba(X)[:, 1]))
    files, warnings = pictures(evaluation, "tree")
    assert warnings == [] and len(files) == 3


def test_a_target_of_one_class_has_no_roc_and_says_so():
    model, X, y = cancer_model()
    X1, y1 = X[y == 1], y[y == 1]
    evaluation = Evaluation("classifier", y1, model.predict(X1), model.predict_proba(X1), model.classes_)
    values, warnings = scores(evaluation)
    assert "accuracy_score" in values and "roc_auc" not in values
    assert any(w.startswith("roc_auc: skipped") and "one class" in w for w in warnings)
    files, warnings = pictures(evaluation, "one")
    assert "one_roc_curve.png" not in files and "one_confusion_matrix.png" in files
    assert any(w.startswith("one_roc_curve.png: skipped") and "one class" in w for w in warnings)


def test_nan_predictions_are_skipped_with_a_warning_never_an_exception():
    X, y = load_diabetes(return_X_y=True)
    predicted = LinearRegression().fit(X, y).predict(X)
    predicted[3] = np.nan
    values, warnings = scores(Evaluation("regressor", y, predicted, score=0.5))
    assert values == {"score": 0.5}
    assert {w.split(":")[0] for w in warnings} == {"mean_squared_error", "root_mean_squared_error",
                                                  "mean_absolute_error", "r2_score"}
    files, warnings = pictures(Evaluation("regressor", y, predicted), "nan")
    assert_pictures(files, ["nan_residuals.png", "nan_predicted_vs_actual.png"])  # the finite points
    assert len(warnings) == 1 and "1 of 442 points left out" in warnings[0]

    model, X, y = iris_model()
    probabilities = model.predict_proba(X)
    probabilities[0, 0] = np.nan
    values, warnings = scores(Evaluation("classifier", y, model.predict(X), probabilities, model.classes_))
    assert "accuracy_score" in values and "log_loss" not in values and "roc_auc" not in values
    assert sorted(w.split(":")[0] for w in warnings) == ["log_loss", "roc_auc"]
    labels = model.predict(X).astype(float)
    labels[0] = np.nan
    values, warnings = scores(Evaluation("classifier", y, labels))
    assert values == {} and len(warnings) == 4


def test_ten_thousand_classes_get_metrics_but_no_confusion_matrix():
    y = np.arange(20_000) % 10_000
    predicted = np.where(np.arange(20_000) % 3 == 0, (y + 1) % 10_000, y)
    evaluation = Evaluation("classifier", y, predicted)
    values, warnings = scores(evaluation)
    assert warnings == []
    assert values["accuracy_score"] == pytest.approx(metrics.accuracy_score(y, predicted))
    assert values["f1_score"] == pytest.approx(metrics.f1_score(y, predicted, average="weighted"))
    files, warnings = pictures(evaluation, "many")
    assert files == {}
    assert warnings == ["many_confusion_matrix.png: skipped, 10000 classes, more than 50 fit in a picture"]

    # with probabilities: log_loss without one-hot encoding 10,000 columns, no AUC of 10,000 curves
    rows = 300
    probabilities = np.random.default_rng(0).random((rows, 10_000)) + 1e-3
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    values, warnings = scores(Evaluation("classifier", y[:rows], predicted[:rows], probabilities, np.arange(10_000)))
    assert values["log_loss"] == pytest.approx(-np.log(probabilities[np.arange(rows), y[:rows]]).mean(), rel=1e-12)
    assert values["log_loss"] == pytest.approx(metrics.log_loss(y[:rows], probabilities, labels=np.arange(10_000)), rel=1e-12)
    assert warnings == ["roc_auc: skipped, 10000 classes: one curve per class would take too long (at most 1000)"]


def test_a_regressor_gets_its_metrics_and_two_pictures_without_warnings():
    X, y = load_diabetes(return_X_y=True)
    model = LinearRegression().fit(X, y)
    predicted = model.predict(X)
    evaluation = Evaluation("regressor", y, predicted, score=model.score(X, y))
    values, warnings = scores(evaluation)
    assert warnings == []
    assert values == pytest.approx({
        "mean_squared_error": metrics.mean_squared_error(y, predicted),
        "root_mean_squared_error": np.sqrt(metrics.mean_squared_error(y, predicted)),
        "mean_absolute_error": metrics.mean_absolute_error(y, predicted),
        "r2_score": metrics.r2_score(y, predicted),
        "score": model.score(X, y),
    }, rel=1e-12)
    files, warnings = pictures(evaluation, "LinearRegression")
    assert warnings == []
    assert_pictures(files, ["LinearRegression_residuals.png", "LinearRegression_predicted_vs_actual.png"])
    big = Evaluation("regressor", np.arange(100_000.0), np.arange(100_000.0) * 1.01)
    files, warnings = pictures(big, "big")  # sampled to 5000 points
    assert warnings == []
    assert_pictures(files, ["big_residuals.png", "big_predicted_vs_actual.png"])


def test_a_clusterer_gets_silhouette_and_friends_where_they_are_defined():
    X, _ = make_blobs(n_samples=600, centers=3, random_state=0)
    model = KMeans(n_clusters=3, n_init=3, random_state=0).fit(X)
    evaluation = Evaluation("clusterer", None, model.labels_, features=X, inertia=model.inertia_, score=model.score(X))
    values, warnings = scores(evaluation)
    assert warnings == []
    assert values == pytest.approx({
        "silhouette_score": metrics.silhouette_score(X, model.labels_),
        "calinski_harabasz_score": metrics.calinski_harabasz_score(X, model.labels_),
        "davies_bouldin_score": metrics.davies_bouldin_score(X, model.labels_),
        "inertia": model.inertia_,
        "score": model.score(X),
    }, rel=1e-12)
    files, warnings = pictures(evaluation, "KMeans")
    assert warnings == []
    assert_pictures(files, ["KMeans_cluster_sizes.png"])

    values, warnings = scores(Evaluation("clusterer", None, np.zeros(600, dtype=int), features=X))
    assert values == {} and len(warnings) == 3 and all("found 1 in 600 samples" in w for w in warnings)

    X, labels = make_blobs(n_samples=5000, centers=4, random_state=1)  # silhouette on a fixed sample of 2000
    first, _ = scores(Evaluation("clusterer", None, labels, features=X))
    again, _ = scores(Evaluation("clusterer", None, labels, features=X))
    assert first == again and -1 <= first["silhouette_score"] <= 1


def test_feature_importances_name_their_features_and_rank_them():
    X, y = load_iris(return_X_y=True, as_frame=True)
    forest = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    files, warnings = importances(forest, None)
    assert warnings == [] and sorted(files) == ["feature_importances.csv", "feature_importances.png"]
    assert_pictures({"feature_importances.png": files["feature_importances.png"]}, ["feature_importances.png"])
    rows = list(csv.reader(io.StringIO(files["feature_importances.csv"].decode())))
    assert rows[0] == ["feature", "importance"]
    expected = sorted(zip(X.columns, forest.feature_importances_), key=lambda pair: -pair[1])
    assert [(name, float(value)) for name, value in rows[1:]] == expected

    files, _ = importances(RandomForestClassifier(n_estimators=5).fit(X.to_numpy(), y), None, "forest")
    assert sorted(files) == ["forest_feature_importances.csv", "forest_feature_importances.png"]
    assert {row[0] for row in csv.reader(io.StringIO(files["forest_feature_importances.csv"].decode()))} == {
        "feature", "x0", "x1", "x2", "x3"}


def test_coefficients_of_a_pipeline_rank_by_mean_absolute_value_over_classes():
    X, y = load_iris(return_X_y=True)
    pipeline = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(X, y)
    names = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    files, warnings = importances(pipeline, names)
    assert warnings == [] and sorted(files) == ["coefficients.csv", "coefficients.png"]
    rows = list(csv.reader(io.StringIO(files["coefficients.csv"].decode())))
    assert rows[0] == ["feature", "coefficient_0", "coefficient_1", "coefficient_2", "mean_abs_coefficient"]
    coef = pipeline[-1].coef_
    ranking = np.abs(coef).mean(axis=0)
    assert [row[0] for row in rows[1:]] == [names[i] for i in np.argsort(-ranking)]
    assert [float(value) for value in rows[1][1:4]] == list(coef[:, np.argmax(ranking)])

    binary = cancer_model()[0][-1]
    rows = list(csv.reader(io.StringIO(importances(binary, None)[0]["coefficients.csv"].decode())))
    assert rows[0] == ["feature", "coefficient"]
    assert abs(float(rows[1][1])) == np.abs(binary.coef_).max()  # signed, ranked by size


def test_a_model_without_importances_gives_nothing_and_no_warning():
    X, y = load_iris(return_X_y=True)
    assert importances(KNeighborsClassifier().fit(X, y), None) == ({}, [])
    assert importances(make_pipeline(StandardScaler(), KNeighborsClassifier()).fit(X, y), None) == ({}, [])
    assert importances(object(), ["a"]) == ({}, [])


def test_the_estimator_as_a_page():
    pipeline = make_pipeline(StandardScaler(), LogisticRegression())
    page = estimator_html(pipeline)
    assert page is not None
    text = page.decode("utf-8")
    assert text.startswith("<!DOCTYPE html>") and '<meta charset="utf-8">' in text
    assert "LogisticRegression" in text and "StandardScaler" in text and text.rstrip().endswith("</html>")


def test_bad_input_is_a_warning_never_an_exception():
    assert scores(Evaluation("classifier", np.arange(3), np.arange(5)))[1]  # lengths differ
    assert pictures(Evaluation("classifier", np.arange(3), np.arange(5)), "p")[1]
    assert scores(Evaluation("ranker", None, np.arange(3))) == ({}, ["scores: skipped, unknown task 'ranker'"])
    assert scores(Evaluation("clusterer", None, np.arange(3), features=np.ones((4, 2))))[1]
    assert pictures(Evaluation("regressor", None, np.arange(3)), "r")[0] == {}


def test_pictures_leave_the_users_pyplot_as_it_was():
    imported_before = "matplotlib.pyplot" in sys.modules
    model, X, y = iris_model()
    pictures(classified(model, X, y), "first")
    if not imported_before:
        assert "matplotlib.pyplot" not in sys.modules  # pictures never import pyplot

    import matplotlib
    import matplotlib.pyplot as plt

    users = plt.figure()
    try:
        figures, backend, dpi = plt.get_fignums(), matplotlib.get_backend(), matplotlib.rcParams["figure.dpi"]
        files, _ = pictures(classified(model, X, y), "iris")
        files.update(pictures(Evaluation("regressor", y * 1.0, model.predict(X) * 1.0), "r")[0])
        files.update(importances(model, None)[0])
        assert len(files) == 7
        assert plt.get_fignums() == figures and plt.gcf() is users
        assert matplotlib.get_backend() == backend and matplotlib.rcParams["figure.dpi"] == dpi
    finally:
        plt.close(users)


def test_a_table_a_mapping_logged_is_charted_by_the_size_of_one_column():
    lightgbm = b"feature,split,gain\nage,3,10.5\nbmi,9,-40.0\nbp,0,\nsex,1,2.25\n"
    assert ranked_rows(lightgbm, "gain") == [("bmi", -40.0), ("age", 10.5), ("sex", 2.25)]  # bp has no gain
    xgboost = "".join(f"f{index},{index}.5\n" for index in range(30)).encode()
    assert [name for name, _ in ranked_rows(b",gain\n" + xgboost, "gain")][:3] == ["f29", "f28", "f27"]  # rows by the first column
    assert_pictures({"chart.png": table_chart(b",gain\n" + xgboost, "gain", "Booster: importance")}, ["chart.png"])
    for damaged in (b"feature,split\nage,3\n", b"feature,gain\nage,lots\n", b""):
        with pytest.raises(ValueError, match="gain"):
            ranked_rows(damaged, "gain")
