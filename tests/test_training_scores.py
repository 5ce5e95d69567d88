"""Training scores and pictures: every model the script fits is scored on its training
data (``training_accuracy_score``…, as MLflow's autolog names them) and drawn (confusion
matrix, curves, residuals, importances, ``estimator.html``), off the script's thread.
Scripts run in their own interpreter; the store is read back through MlflowClient."""

from __future__ import annotations

import textwrap

import pytest
from conftest import only_run, run_script, store_of
from mlflow.tracking import MlflowClient
from sklearn import datasets, metrics
from sklearn.linear_model import LogisticRegression, Ridge

CLASSIFIER_SCORES = {"training_accuracy_score", "training_precision_score", "training_recall_score",
                     "training_f1_score", "training_log_loss", "training_roc_auc", "training_score"}
REGRESSOR_SCORES = {"training_mean_squared_error", "training_root_mean_squared_error",
                    "training_mean_absolute_error", "training_r2_score", "training_score"}


def script(body: str, config: str = "") -> str:
    return "from pypads import PyPads\nPyPads(name='training'" + (f", config={config}" if config else "") + ")\n" + \
        textwrap.dedent(body)


BINARY = """
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    X, y = load_breast_cancer(return_X_y=True)
    model = LogisticRegression(max_iter=3000).fit(X, y)
    print("ok")
"""


def artifacts(client: MlflowClient, run_id: str, path: str | None = None) -> list[str]:
    found = []
    for item in client.list_artifacts(run_id, path):
        found.extend(artifacts(client, run_id, item.path) if item.is_dir else [item.path])
    return found


def test_a_binary_classifier_has_autologs_training_scores_on_its_page_and_its_pictures(tmp_path):
    result = run_script(script(BINARY), tmp_path)
    assert result.returncode == 0, result.stderr
    run = only_run(store_of(tmp_path))
    assert run.status == "FINISHED"
    X, y = datasets.load_breast_cancer(return_X_y=True)
    expected = LogisticRegression(max_iter=3000).fit(X, y)
    predicted = expected.predict(X)
    named = {key.removeprefix("LogisticRegression."): value for key, value in run.metrics.items()}
    assert CLASSIFIER_SCORES <= set(named)
    assert named["training_accuracy_score"] == pytest.approx(metrics.accuracy_score(y, predicted))
    assert named["training_f1_score"] == pytest.approx(metrics.f1_score(y, predicted))
    assert named["training_roc_auc"] == pytest.approx(metrics.roc_auc_score(y, expected.predict_proba(X)[:, 1]))
    assert named["training_score"] == named["training_accuracy_score"]
    # each linked to the model and to the dataset it was computed on, on the model's page
    client = MlflowClient(run.uri)
    (model,) = client.search_logged_models([run.run.info.experiment_id])
    # (named as the run names them: one point in its history, see docs/run.md)
    linked = {metric.key.removeprefix("LogisticRegression."): metric for metric in model.metrics or []}
    assert CLASSIFIER_SCORES <= set(linked)
    assert linked["training_accuracy_score"].dataset_name == "X"
    assert linked["training_accuracy_score"].step == 0
    files = set(run.artifacts())
    assert {"training_confusion_matrix.png", "training_roc_curve.png", "training_precision_recall_curve.png",
            "estimator.html", "coefficients.png", "coefficients.csv"} <= files
    picture = run.artifact_bytes("training_confusion_matrix.png")
    assert picture.startswith(b"\x89PNG") and len(picture) <= 200_000
    assert "LogisticRegression" in run.artifact_text("estimator.html")


def test_a_regressor_has_its_training_errors_and_residuals(tmp_path):
    result = run_script(script("""
        from sklearn.datasets import load_diabetes
        from sklearn.linear_model import Ridge
        X, y = load_diabetes(return_X_y=True, as_frame=True)
        Ridge(alpha=0.5).fit(X, y)
    """), tmp_path)
    assert result.returncode == 0, result.stderr
    run = only_run(store_of(tmp_path))
    X, y = datasets.load_diabetes(return_X_y=True, as_frame=True)
    predicted = Ridge(alpha=0.5).fit(X, y).predict(X)
    named = {key.removeprefix("Ridge."): value for key, value in run.metrics.items()}
    assert REGRESSOR_SCORES <= set(named)
    assert named["training_r2_score"] == pytest.approx(metrics.r2_score(y, predicted))
    assert named["training_mean_absolute_error"] == pytest.approx(metrics.mean_absolute_error(y, predicted))
    files = set(run.artifacts())
    assert {"training_residuals.png", "training_predicted_vs_actual.png", "coefficients.csv"} <= files
    # feature names from the DataFrame's columns
    assert "bmi" in run.artifact_text("coefficients.csv")


def test_a_clusterer_has_silhouette_and_inertia(tmp_path):
    result = run_script(script("""
        from sklearn.cluster import KMeans
        from sklearn.datasets import make_blobs
        X, _ = make_blobs(n_samples=300, centers=3, random_state=0)
        KMeans(n_clusters=3, n_init=3, random_state=0).fit(X)
    """), tmp_path)
    assert result.returncode == 0, result.stderr
    run = only_run(store_of(tmp_path))
    from sklearn.cluster import KMeans
    X, _ = datasets.make_blobs(n_samples=300, centers=3, random_state=0)
    model = KMeans(n_clusters=3, n_init=3, random_state=0).fit(X)
    assert run.metrics["KMeans.training_silhouette_score"] == pytest.approx(metrics.silhouette_score(X, model.labels_))
    assert run.metrics["KMeans.training_inertia"] == pytest.approx(model.inertia_)


def test_two_models_each_have_their_training_scores_and_pictures_in_their_child_run(tmp_path):
    result = run_script(script("""
        from sklearn.datasets import load_iris
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.linear_model import LogisticRegression
        X, y = load_iris(return_X_y=True)
        RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
        LogisticRegression(max_iter=500).fit(X, y)
    """), tmp_path)
    assert result.returncode == 0, result.stderr
    client = MlflowClient(store_of(tmp_path))
    experiment = client.get_experiment_by_name("training")
    runs = client.search_runs([experiment.experiment_id])
    children = {run.info.run_name: run for run in runs if "mlflow.parentRunId" in run.data.tags}
    assert set(children) == {"RandomForestClassifier", "LogisticRegression"}
    for name, child in children.items():
        assert CLASSIFIER_SCORES <= set(child.data.metrics), name
        files = set(artifacts(client, child.info.run_id))
        assert {"training_confusion_matrix.png", "training_roc_curve.png", "estimator.html"} <= files, name
    assert "feature_importances.csv" in set(artifacts(client, children["RandomForestClassifier"].info.run_id))


def test_training_scores_change_nothing_the_script_computes(tmp_path):
    body = """
        import numpy as np
        from sklearn.datasets import load_iris
        from sklearn.dummy import DummyClassifier
        from sklearn.neighbors import KNeighborsClassifier
        X, y = load_iris(return_X_y=True)
        np.random.seed(3)
        model = KNeighborsClassifier().fit(X, y)
        DummyClassifier(strategy="stratified").fit(X, y)  # its predict draws from numpy's global generator
        print(np.random.rand(), model.predict(X[:5]).tolist())
    """
    (tmp_path / "tracked").mkdir()
    (tmp_path / "untracked").mkdir()
    tracked = run_script(script(body), tmp_path / "tracked")
    untracked = run_script(textwrap.dedent(body), tmp_path / "untracked")
    assert tracked.returncode == 0, tracked.stderr
    assert tracked.stdout == untracked.stdout


def test_a_prediction_dearer_than_a_tenth_of_the_fit_is_made_on_a_sample(tmp_path):
    result = run_script(script("""
        import numpy as np
        from sklearn.neighbors import KNeighborsRegressor
        rng = np.random.default_rng(0)
        X = rng.normal(size=(30000, 8)); y = X.sum(axis=1)
        KNeighborsRegressor().fit(X, y)
    """), tmp_path)
    assert result.returncode == 0, result.stderr
    run = only_run(store_of(tmp_path))
    assert "of 30000 rows" in run.tags["pypads.training_sample"]
    assert "KNeighborsRegressor.training_r2_score" in run.metrics


def test_training_scores_can_be_switched_off(tmp_path):
    result = run_script(script(BINARY, config='{"disabled": ["TrainingScores"]}'), tmp_path)
    assert result.returncode == 0, result.stderr
    run = only_run(store_of(tmp_path))
    assert not [key for key in run.metrics if "training_" in key]
    assert "training_confusion_matrix.png" not in run.artifacts()


@pytest.mark.parametrize(("body", "skipped", "kept"), [
    ("""
        import numpy as np
        from sklearn.dummy import DummyClassifier
        X = np.arange(20.0).reshape(10, 2); y = np.zeros(10, dtype=int)
        DummyClassifier().fit(X, y)
    """, "roc", "training_confusion_matrix.png"),
    ("""
        import numpy as np
        from sklearn.tree import DecisionTreeClassifier
        X = np.arange(20000.0).reshape(10000, 2); y = np.arange(10000)
        DecisionTreeClassifier(max_depth=2).fit(X, y)
    """, "confusion", None),
    ("""
        import numpy as np
        from sklearn.tree import DecisionTreeClassifier
        from sklearn.datasets import load_iris
        X, y = load_iris(return_X_y=True)
        DecisionTreeClassifier().fit(X, np.array(["setosa", "versicolor", "virginica"])[y])
    """, None, "training_confusion_matrix.png"),
])
def test_bad_input_gives_the_pictures_that_make_sense_and_a_warning_naming_the_one_skipped(tmp_path, body, skipped, kept):
    result = run_script(script(body), tmp_path)
    assert result.returncode == 0, result.stderr
    run = only_run(store_of(tmp_path))
    assert run.status == "FINISHED"
    assert any(key.endswith("training_accuracy_score") for key in run.metrics)
    if skipped is not None:
        assert skipped in result.stderr.lower()
    if kept is not None:
        assert kept in run.artifacts()
    assert "Traceback" not in result.stderr


def test_nan_predictions_skip_their_scores_with_a_warning(tmp_path):
    result = run_script(script("""
        import numpy as np
        from sklearn.base import BaseEstimator, RegressorMixin
        class Broken(RegressorMixin, BaseEstimator):
            def fit(self, X, y):
                return self
            def predict(self, X):
                return np.full(len(X), np.nan)
        Broken().fit(np.ones((20, 2)), np.arange(20.0))
        print("done")
    """), tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "done"
    run = only_run(store_of(tmp_path))
    assert run.status == "FINISHED"
    assert "nan" in result.stderr.lower()
    assert not [key for key in run.metrics if "training_r2" in key]


def test_a_model_without_predict_gets_no_training_scores(tmp_path):
    result = run_script(script("""
        from sklearn.datasets import load_iris
        from sklearn.preprocessing import StandardScaler
        X, y = load_iris(return_X_y=True)
        StandardScaler().fit(X, y)
    """), tmp_path)
    assert result.returncode == 0, result.stderr
    run = only_run(store_of(tmp_path))
    assert run.status == "FINISHED"
    assert not [key for key in run.metrics if "training_" in key]
    assert not [path for path in run.artifacts() if path.startswith("training_")]


def test_a_loop_of_fits_scores_as_many_models_as_the_run_saves(tmp_path):
    result = run_script(script("""
        from sklearn.datasets import load_iris
        from sklearn.tree import DecisionTreeClassifier
        X, y = load_iris(return_X_y=True)
        for depth in range(1, 26):
            DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y)
    """), tmp_path)
    assert result.returncode == 0, result.stderr
    run = only_run(store_of(tmp_path))
    scored = {key.split(".")[0] for key in run.metrics if key.endswith(".training_accuracy_score")}
    assert len(scored) == 20 and "DecisionTreeClassifier" in scored and "DecisionTreeClassifier_19" in scored
    assert run.metrics["DecisionTreeClassifier.training_accuracy_score"] < run.metrics[
        "DecisionTreeClassifier_19.training_accuracy_score"]


def test_a_dataset_the_script_scores_a_model_on_gets_its_pictures_too(tmp_path):
    result = run_script(script("""
        from sklearn.datasets import load_diabetes, load_iris
        from sklearn.linear_model import LogisticRegression
        from sklearn.metrics import accuracy_score, f1_score
        from sklearn.model_selection import train_test_split
        X, y = load_iris(return_X_y=True)
        X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
        model = LogisticRegression(max_iter=500).fit(X_train, y_train)
        predicted = model.predict(X_test)
        for _ in range(3):
            print(accuracy_score(y_test, predicted), f1_score(y_test, predicted, average="macro"))
    """), tmp_path)
    assert result.returncode == 0, result.stderr
    run = only_run(store_of(tmp_path))
    files = run.artifacts()
    assert "X_test_confusion_matrix.png" in files and "training_confusion_matrix.png" in files
    # pictures only: the script's own scores on X_test are its metrics, nothing added
    assert not [key for key in run.metrics if "X_test_" in key and not key.endswith("_X_test")]


def test_a_picture_that_fails_after_the_script_has_gone_is_a_tag_on_the_run(tmp_path):
    # The pictures are drawn once the script has exited: a model whose class the uploader
    # cannot import (its module is on the script's path only) gets a tag saying so.
    library = tmp_path / "lib"
    library.mkdir()
    (library / "local_model.py").write_text(textwrap.dedent("""
        from sklearn.tree import DecisionTreeClassifier
        class LocalTree(DecisionTreeClassifier):
            pass
    """))
    result = run_script(script("""
        import sys
        sys.path.insert(0, "lib")
        from local_model import LocalTree
        from sklearn.datasets import load_iris
        X, y = load_iris(return_X_y=True)
        LocalTree(max_depth=2).fit(X, y)
    """), tmp_path)
    assert result.returncode == 0, result.stderr
    run = only_run(store_of(tmp_path))
    assert run.status == "FINISHED"
    assert "training_confusion_matrix.png" in run.artifacts()
    assert "local_model" in run.tags.get("pypads.failure.pictures", "")
