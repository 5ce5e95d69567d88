"""Searches and cross-validation: what a search found, one child run per candidate, and
per-fold scores, read from the search object (so they hold with n_jobs=2 too)."""

from __future__ import annotations

import csv
import io

import pytest
from mlflow.tracking import MlflowClient
from test_models import script_ok


def children(run) -> list:
    """The child runs of a search's candidates (not those of the model comparison)."""
    client = MlflowClient(run.uri)
    found = client.search_runs([run.run.info.experiment_id], f"tags.mlflow.parentRunId = '{run.run_id}'")
    candidates = [child for child in found if "pypads.candidate" in child.data.tags]
    return sorted(candidates, key=lambda child: int(child.data.tags["pypads.candidate"]))


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_grid_search_has_best_params_best_score_cv_results_and_a_child_run_per_candidate(tmp_path, n_jobs):
    run = script_ok(f"""
        track()
        from sklearn import datasets
        from sklearn.model_selection import GridSearchCV
        from sklearn.pipeline import Pipeline
        from sklearn.preprocessing import StandardScaler
        from sklearn.svm import SVC
        X, y = datasets.load_iris(return_X_y=True)
        pipe = Pipeline([("scale", StandardScaler()), ("clf", SVC())])
        search = GridSearchCV(pipe, {{"clf__C": [0.1, 1, 10], "clf__kernel": ["linear", "rbf"]}}, cv=3, n_jobs={n_jobs})
        search.fit(X, y)
        print(search.best_params_, search.best_score_)
    """, tmp_path)
    assert run.params["best_clf__C"] in {"0.1", "1", "10"}
    assert run.params["best_clf__kernel"] in {"linear", "rbf"}
    assert 0.9 < run.metrics["best_cv_score"] <= 1
    table = list(csv.DictReader(io.StringIO(run.artifact_text("cv_results.csv"))))
    assert len(table) == 6 and {"mean_test_score", "rank_test_score", "params", "split0_test_score"} <= set(table[0])
    runs = children(run)
    assert len(runs) == 6
    for index, child in enumerate(runs):
        assert child.info.status == "FINISHED"
        assert float(child.data.params["clf__C"]) == float(table[index]["param_clf__C"])
        assert child.data.params["clf__kernel"] == table[index]["param_clf__kernel"]
        assert child.data.metrics["mean_test_score"] == pytest.approx(float(table[index]["mean_test_score"]))
        assert {"std_test_score", "rank_test_score", "mean_fit_time"} <= set(child.data.metrics)
    best = min(runs, key=lambda child: child.data.metrics["rank_test_score"])
    assert best.data.metrics["mean_test_score"] == pytest.approx(run.metrics["best_cv_score"])
    # the search's own settings, and of the estimator it searches only what was set
    assert run.params["GridSearchCV.cv"] == "3" and run.params["GridSearchCV.n_jobs"] == str(n_jobs)
    assert {"GridSearchCV.refit", "GridSearchCV.scoring", "GridSearchCV.param_grid", "GridSearchCV.estimator",
            "GridSearchCV.estimator__steps"} <= set(run.params)
    nested = sorted(key for key in run.params if key.startswith("GridSearchCV.estimator__"))
    assert nested == ["GridSearchCV.estimator__clf", "GridSearchCV.estimator__scale", "GridSearchCV.estimator__steps"]


def test_a_search_logs_the_searched_estimators_params_that_differ_from_their_defaults(tmp_path):
    run = script_ok("""
        track()
        from sklearn import datasets
        from sklearn.model_selection import RandomizedSearchCV
        from sklearn.tree import DecisionTreeClassifier
        X, y = datasets.load_iris(return_X_y=True)
        RandomizedSearchCV(DecisionTreeClassifier(random_state=0, criterion="entropy"), {"max_depth": [1, 2, 3]},
                           n_iter=2, cv=3, random_state=1).fit(X, y)
    """, tmp_path)
    nested = {key: value for key, value in run.params.items() if key.startswith("RandomizedSearchCV.estimator__")}
    assert nested == {"RandomizedSearchCV.estimator__random_state": "0", "RandomizedSearchCV.estimator__criterion": "entropy"}
    assert run.params["RandomizedSearchCV.n_iter"] == "2" and run.params["RandomizedSearchCV.cv"] == "3"
    assert run.params["best_max_depth"] in {"1", "2", "3"} and "best_cv_score" in run.metrics
    # the refit model's page: its own params as fitted (every one), beside the search's settings
    models = {model.name: model for model in MlflowClient(run.uri).search_logged_models([run.run.info.experiment_id])}
    # the search itself too, as autolog saves it, to load and predict with
    assert set(models) == {"RandomizedSearchCV", "RandomizedSearchCV-best_estimator"}
    assert models["RandomizedSearchCV"].params["n_iter"] == "2"
    model = models["RandomizedSearchCV-best_estimator"]
    assert model.params["max_depth"] == run.params["best_max_depth"] and model.params["min_samples_split"] == "2"
    assert model.params["n_iter"] == "2"
    # the best cross-validated score on both pages, as autolog shows it on the search's
    for page in models.values():
        assert {metric.key: metric.value for metric in page.metrics}["RandomizedSearchCV.best_cv_score"] \
            == run.metrics["best_cv_score"]


def test_a_search_with_n_jobs_counts_its_workers_cpu_time_and_memory(tmp_path):
    run = script_ok("""
        track()
        import json, os, psutil
        from sklearn.datasets import make_classification
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.model_selection import GridSearchCV
        X, y = make_classification(n_samples=3000, n_features=20, random_state=0)
        search = GridSearchCV(RandomForestClassifier(random_state=0), {"n_estimators": [40, 60]}, cv=2, n_jobs=2)
        search.fit(X, y)
        fitting = float(sum(search.cv_results_["mean_fit_time"]) * 2)  # wall time of the 4 fits, in the workers
        own = psutil.Process(os.getpid()).memory_info().rss / 1024 ** 2
        json.dump({"fitting": fitting, "own_rss_mb": own}, open("facts.json", "w"))
    """, tmp_path)
    import json
    facts = json.loads((tmp_path / "facts.json").read_text())
    # the script's process only waited (a tenth of a second): the fits ran in the workers
    assert run.metrics["system/GridSearchCV.fit.cpu_seconds"] >= 0.5 * facts["fitting"] > 0.3
    assert run.metrics["system/GridSearchCV.fit.rss_mb"] > facts["own_rss_mb"] + 20  # and so did their memory


def test_randomized_and_halving_searches_and_a_child_run_cap(tmp_path):
    run = script_ok("""
        from pypads.recording.loggers import Search
        LOGGERS["search"] = Search(max_child_runs=3)
        track()
        from sklearn import datasets
        from sklearn.experimental import enable_halving_search_cv  # noqa: F401
        from sklearn.model_selection import HalvingGridSearchCV, RandomizedSearchCV
        from sklearn.tree import DecisionTreeClassifier
        X, y = datasets.load_iris(return_X_y=True)
        RandomizedSearchCV(DecisionTreeClassifier(random_state=0), {"max_depth": [1, 2, 3, 4, 5]}, n_iter=4,
                           cv=3, random_state=0).fit(X, y)
        HalvingGridSearchCV(DecisionTreeClassifier(random_state=0), {"max_depth": [1, 2, 3]}, cv=3).fit(X, y)
    """, tmp_path)
    assert {"best_max_depth", "search_2.best_max_depth"} <= set(run.params)
    assert {"best_cv_score", "search_2.best_cv_score"} <= set(run.metrics)
    assert {"cv_results.csv", "cv_results_2.csv"} <= set(run.artifacts())
    assert len(children(run)) == 6  # 3 of each: the best-ranked ones
    assert "child runs for the best 3 only" in run.tags["pypads.search"]


def test_cross_val_score_and_cross_validate_log_each_fold_the_mean_the_std_and_the_params(tmp_path):
    run = script_ok("""
        track()
        from sklearn import datasets
        from sklearn.model_selection import cross_val_score, cross_validate
        from sklearn.tree import DecisionTreeClassifier
        X, y = datasets.load_iris(return_X_y=True)
        scores = cross_val_score(DecisionTreeClassifier(random_state=0), X, y, cv=4)
        np.save("scores.npy", scores)
        cross_validate(DecisionTreeClassifier(random_state=0), X, y, cv=3, scoring=["accuracy", "f1_macro"],
                       return_train_score=True)
    """, tmp_path)
    import numpy as np
    expected = np.load(tmp_path / "scores.npy")
    assert run.metric_history("cv_DecisionTreeClassifier_test_score") == [(fold, score) for fold, score in enumerate(expected)]
    assert run.metrics["cv_DecisionTreeClassifier_test_score_mean"] == pytest.approx(expected.mean())
    assert [step for step, _ in run.metric_history("cv_DecisionTreeClassifier_2_test_f1_macro")] == [0, 1, 2]
    assert "cv_DecisionTreeClassifier_2_train_accuracy_mean" in run.metrics
    assert run.metrics["cv_DecisionTreeClassifier_test_score_std"] == pytest.approx(expected.std())
    assert "cv_DecisionTreeClassifier_2_train_accuracy_std" in run.metrics
    # the estimator's params: scikit-learn fits clones of it, never it
    assert run.params["DecisionTreeClassifier.random_state"] == "0"
    assert run.params["DecisionTreeClassifier.max_depth"] == "None"
