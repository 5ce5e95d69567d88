"""XGBoost and LightGBM, tracked by their shipped mapping files alone: native training and
cross-validation, the scikit-learn estimators' training curves, and each model saved in
MLflow's flavour for its library, predicting what the script predicted. Scripts run in
their own interpreter on data scikit-learn ships; the store is read back through
MlflowClient."""

from __future__ import annotations

import csv
import io
import json
import re
import textwrap
from pathlib import Path

import mlflow
import mlflow.lightgbm
import mlflow.xgboost
import numpy as np
import pandas
import pytest
import xgboost as xgb
from conftest import RunView, only_run, run_script, store_of
from mlflow.tracking import MlflowClient

from pypads.core.mapping.files import default_mapping_paths

BREAST_CANCER = textwrap.dedent("""
    from pypads import PyPads
    tracker = PyPads()
    import numpy as np
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
""")

DIABETES = BREAST_CANCER.replace("load_breast_cancer", "load_diabetes")


def run(code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[RunView, MlflowClient]:
    result = run_script(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Warning" not in result.stderr, result.stderr
    uri = store_of(tmp_path)
    # Where models:/<id> is looked up, for this test only (see test_models.use_store).
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setattr(mlflow.tracking._tracking_service.utils, "_tracking_uri", uri)
    return only_run(uri), MlflowClient(uri)


def child(client: MlflowClient, parent: RunView, name: str):
    found = client.search_runs([parent.run.info.experiment_id],
                               f"tags.`mlflow.parentRunId` = '{parent.run_id}' and attributes.run_name = '{name}'")
    assert len(found) == 1, name
    return found[0]


def logged_model(client: MlflowClient, parent: RunView, name: str):
    models = [model for model in client.search_logged_models([parent.run.info.experiment_id]) if model.name == name]
    assert len(models) == 1, [model.name for model in client.search_logged_models([parent.run.info.experiment_id])]
    return models[0]


def test_xgboost_train_logs_params_curves_best_iteration_and_a_loadable_booster(tmp_path, monkeypatch):
    parent, client = run(BREAST_CANCER + textwrap.dedent("""
        import xgboost as xgb
        dtrain, dtest = xgb.DMatrix(X_train, label=y_train), xgb.DMatrix(X_test, label=y_test)
        booster = xgb.train({"max_depth": 3, "eta": 0.3, "objective": "binary:logistic", "eval_metric": "logloss"},
                            dtrain, 200, evals=[(dtrain, "train"), (dtest, "test")], early_stopping_rounds=5, verbose_eval=False)
        np.save("predicted.npy", booster.predict(dtest))
        np.save("facts.npy", np.array([booster.best_iteration, booster.num_boosted_rounds()]))
        clf = xgb.XGBClassifier(n_estimators=25, max_depth=2).fit(X_train, y_train, eval_set=[(X_test, y_test)], verbose=False)
        np.save("predicted_clf.npy", clf.predict_proba(X_test))
        np.save("X_test.npy", X_test)
    """), tmp_path, monkeypatch)
    best, rounds = np.load(tmp_path / "facts.npy")
    assert parent.params["Booster.max_depth"] == "3" and parent.params["Booster.num_boost_round"] == "200"
    assert parent.params["Booster.early_stopping_rounds"] == "5"
    for series in ("Booster.train.logloss", "Booster.test.logloss"):
        history = parent.metric_history(series)
        assert [step for step, _ in history] == list(range(rounds)), series
    assert parent.metrics["Booster.best_iteration"] == best < rounds - 1
    assert parent.metrics["Booster.best_score"] == pytest.approx(parent.metric_history("Booster.test.logloss")[best][1])
    # The scikit-learn estimator's curve: one point per tree, on the evaluation set it was given.
    assert [step for step, _ in parent.metric_history("XGBClassifier.validation_0.logloss")] == list(range(25))
    # Each model is logged once, in MLflow's xgboost flavour, predicting what the script predicted.
    booster_model = logged_model(client, parent, "Booster")
    assert {"max_depth": "3", "objective": "binary:logistic"}.items() <= booster_model.params.items()
    # Each curve's last value on the model's page, linked to the evaluation set it was computed on.
    linked = {metric.key: metric.dataset_name for metric in booster_model.metrics}
    assert linked["test.logloss"] == "dtest" and linked["train.logloss"] == "dtrain"
    loaded = mlflow.xgboost.load_model(f"models:/{booster_model.model_id}")
    X_test = np.load(tmp_path / "X_test.npy")
    np.testing.assert_array_equal(loaded.predict(xgb.DMatrix(X_test)), np.load(tmp_path / "predicted.npy"))
    classifier = mlflow.xgboost.load_model(f"models:/{logged_model(client, parent, 'XGBClassifier').model_id}")
    np.testing.assert_array_equal(classifier.predict_proba(X_test), np.load(tmp_path / "predicted_clf.npy"))
    # Importance as one table of the features the trees split on: gain, weight and cover.
    table = list(csv.DictReader(io.StringIO(parent.artifact_text("Booster/feature_importance.csv"))))
    assert table and set(table[0]) == {"", "gain", "weight", "cover"} and all(row[""].startswith("f") for row in table)
    # Logged once each: the train that XGBClassifier.fit makes inside adds no Booster of its own.
    names = sorted(model.name for model in client.search_logged_models([parent.run.info.experiment_id]))
    assert names == ["Booster", "XGBClassifier"]
    assert not [key for key in parent.params if key.startswith("Booster_")], parent.params
    # Two models: a child run each, the curve's last value and the params as their own.
    booster_run = child(client, parent, "Booster")
    assert booster_run.data.params["max_depth"] == "3"
    assert booster_run.data.metrics["best_iteration"] == best
    # Its data: the DMatrix objects, named as the script names them; its importance as a chart beside the model's pictures.
    used = [(item.dataset.name, item.tags[0].value) for item in booster_run.inputs.dataset_inputs]
    assert used == [("dtrain", "training"), ("dtest", "evaluation")]
    with open(client.download_artifacts(booster_run.info.run_id, "feature_importance.png", str(tmp_path)), "rb") as chart:
        picture = chart.read()
    assert picture.startswith(b"\x89PNG") and len(picture) <= 200_000
    # The model's own run shows the whole curve, as the parent does.
    curve = client.get_metric_history(booster_run.info.run_id, "test.logloss")
    assert [(point.step, point.value) for point in sorted(curve, key=lambda point: point.step)] == \
        parent.metric_history("Booster.test.logloss")


def test_xgboost_cv_logs_each_rounds_mean_and_std(tmp_path, monkeypatch):
    parent, _ = run(BREAST_CANCER + textwrap.dedent("""
        import scipy.sparse
        import xgboost as xgb
        sparse = scipy.sparse.csr_matrix(np.where(X_train > np.median(X_train, axis=0), X_train, 0.0))
        result = xgb.cv({"max_depth": 2, "objective": "binary:logistic", "eval_metric": "auc"},
                        xgb.DMatrix(sparse, label=y_train), 15, nfold=4, seed=1)
        result.to_csv("cv.csv", index=False)
        np.save("shape.npy", np.array(sparse.shape))
    """), tmp_path, monkeypatch)
    # Its data, sparse: digested and described by its shape, never densified.
    (data,) = parent.run.inputs.dataset_inputs
    rows, columns = np.load(tmp_path / "shape.npy")
    assert json.loads(data.dataset.profile)["num_rows"] == rows
    features = json.loads(json.loads(data.dataset.schema)["mlflow_tensorspec"]["features"])
    assert features[0]["tensor-spec"]["shape"] == [-1, columns]
    assert parent.params["xgboost.cv.nfold"] == "4" and parent.params["xgboost.cv.max_depth"] == "2"
    expected = pandas.read_csv(tmp_path / "cv.csv")
    for column in ("test-auc-mean", "test-auc-std", "train-auc-mean"):
        history = parent.metric_history(f"xgboost.cv.{column}")
        assert [step for step, _ in history] == list(range(15))
        np.testing.assert_allclose([value for _, value in history], expected[column])
    assert not [key for key in parent.metrics if key.startswith("cv_")], "the scikit-learn cross-validation logger kept out"


def test_lightgbm_train_records_its_curves_without_the_scripts_callback(tmp_path, monkeypatch):
    parent, client = run(DIABETES + textwrap.dedent("""
        import lightgbm as lgb
        train = lgb.Dataset(X_train, y_train)
        valid = lgb.Dataset(X_test, y_test, reference=train)
        booster = lgb.train({"objective": "regression", "num_leaves": 7, "verbose": -1}, train, 300,
                            valid_sets=[train, valid], valid_names=["train", "valid"],
                            callbacks=[lgb.early_stopping(10, verbose=False)])
        np.save("predicted.npy", booster.predict(X_test))
        np.save("facts.npy", np.array([booster.best_iteration, booster.current_iteration()]))
        model = lgb.LGBMRegressor(n_estimators=30, verbose=-1).fit(X_train, y_train, eval_X=(X_test,), eval_y=(y_test,))
        np.save("predicted_reg.npy", model.predict(X_test))
        np.save("X_test.npy", X_test)
    """), tmp_path, monkeypatch)
    best, kept = np.load(tmp_path / "facts.npy")
    assert kept == best < 300  # stopped early: the booster keeps its best iteration's trees
    rounds = best + 10  # the rounds it ran: the best, and the 10 of patience after it
    assert parent.params["Booster.num_leaves"] == "7" and parent.params["Booster.num_boost_round"] == "300"
    for series in ("Booster.train.l2", "Booster.valid.l2"):
        assert [step for step, _ in parent.metric_history(series)] == list(range(rounds)), series
    assert parent.metrics["Booster.best_iteration"] == best
    assert parent.metrics["Booster.best_score.valid.l2"] == pytest.approx(parent.metric_history("Booster.valid.l2")[best - 1][1])
    assert [step for step, _ in parent.metric_history("LGBMRegressor.valid_0.l2")] == list(range(30))
    # No early stopping in the estimator's fit: LightGBM's best_iteration_ of 0 means none, and none is logged.
    assert "LGBMRegressor.best_iteration" not in parent.metrics
    table = list(csv.DictReader(io.StringIO(parent.artifact_text("Booster/feature_importance.csv"))))
    assert [row["feature"] for row in table] == [f"Column_{index}" for index in range(10)]  # every feature: split and gain
    assert sum(int(row["split"]) for row in table) > 0 and {"split", "gain"} < set(table[0])
    X_test = np.load(tmp_path / "X_test.npy")
    booster = mlflow.lightgbm.load_model(f"models:/{logged_model(client, parent, 'Booster').model_id}")
    np.testing.assert_array_equal(booster.predict(X_test), np.load(tmp_path / "predicted.npy"))
    regressor = mlflow.lightgbm.load_model(f"models:/{logged_model(client, parent, 'LGBMRegressor').model_id}")
    np.testing.assert_array_equal(regressor.predict(X_test), np.load(tmp_path / "predicted_reg.npy"))
    # The Dataset's raw data, read before train frees it: the same dataset the estimator was fitted on.
    booster_run = child(client, parent, "Booster")
    for name in ("Booster", "LGBMRegressor"):
        used = [(item.dataset.name, item.tags[0].value) for item in child(client, parent, name).inputs.dataset_inputs]
        assert used == [("X_train", "training"), ("X_test", "evaluation")], name
    linked = {metric.key: metric.dataset_name for metric in logged_model(client, parent, "Booster").metrics}
    assert linked["train.l2"] == "X_train" and linked["valid.l2"] == "X_test"
    assert "feature_importance.png" in [item.path for item in client.list_artifacts(booster_run.info.run_id)]


def test_lightgbm_cv_logs_each_rounds_mean_and_stdv(tmp_path, monkeypatch):
    parent, _ = run(DIABETES + textwrap.dedent("""
        import json
        import lightgbm as lgb
        result = lgb.cv({"objective": "regression", "verbose": -1}, lgb.Dataset(X_train, y_train), 12, nfold=3, stratified=False)
        json.dump({key: list(values) for key, values in result.items()}, open("cv.json", "w"))
    """), tmp_path, monkeypatch)
    expected = json.loads((tmp_path / "cv.json").read_text())
    assert sorted(expected) == ["valid l2-mean", "valid l2-stdv"]
    assert parent.params["lightgbm.cv.nfold"] == "3"
    for key, values in expected.items():
        history = parent.metric_history(f"lightgbm.cv.{key}")
        assert [step for step, _ in history] == list(range(12))
        np.testing.assert_allclose([value for _, value in history], values)


def test_a_shipped_file_copied_with_a_wrong_version_range_tracks_nothing_and_says_so_once(tmp_path):
    shipped = next(path for path in default_mapping_paths() if path.name == "xgboost_3.json")
    document = json.loads(shipped.read_text())
    document["metadata"]["library_versions"] = ">=1.0,<2"
    copy = tmp_path / "xgboost_old.json"
    copy.write_text(json.dumps(document))
    tracked = f"tracker = PyPads(mapping_paths=[{str(copy)!r}], include_default_mappings=False)"
    result = run_script(BREAST_CANCER.replace("tracker = PyPads()", tracked) + textwrap.dedent("""
        import xgboost as xgb
        for depth in (2, 3):
            xgb.train({"max_depth": depth}, xgb.DMatrix(X_train, label=y_train), 5)
    """), tmp_path)
    assert result.returncode == 0, result.stderr
    said = re.findall(r"xgboost_old\.json: at \$\.metadata\.library_versions: '<2,>=1\.0' excludes it", result.stderr)
    assert len(said) == 1, result.stderr
    parent = only_run(store_of(tmp_path))
    assert parent.params == {} and not [key for key in parent.metrics if not key.startswith("system/")], parent.metrics


def test_a_mapping_can_have_the_library_record_only_with_a_function_of_its_own(tmp_path):
    shipped = next(path for path in default_mapping_paths() if path.name == "xgboost_3.json")
    document = json.loads(shipped.read_text())
    document["metadata"]["mapping_version"] = "9.0.0"
    # sys.exit, reached through a module of the library: not the library's function, never called.
    document["algorithms"][0]["reading"]["train"]["record"] = {"argument": "callbacks", "append": "xgboost.core.sys.exit"}
    hostile = tmp_path / "xgboost_hostile.json"
    hostile.write_text(json.dumps(document))
    tracked = f"tracker = PyPads(mapping_paths=[{str(hostile)!r}], include_default_mappings=False)"
    result = run_script(BREAST_CANCER.replace("tracker = PyPads()", tracked) + textwrap.dedent("""
        import xgboost as xgb
        booster = xgb.train({"max_depth": 2}, xgb.DMatrix(X_train, label=y_train), 5)
        print("trained", booster.num_boosted_rounds())
    """), tmp_path)
    assert result.returncode == 0 and "trained 5" in result.stdout, result.stderr
    assert only_run(store_of(tmp_path)).params["Booster.max_depth"] == "2"


def test_the_scripts_own_warnings_show_as_often_as_untracked(tmp_path):
    # XGBoost warns once per place of positional evals; a reading must not make Python forget it has shown it.
    script = BREAST_CANCER + textwrap.dedent("""
        import xgboost as xgb
        dtrain = xgb.DMatrix(X_train, label=y_train)
        for rounds in (2, 3, 4):
            xgb.train({"max_depth": 2}, dtrain, rounds, [(dtrain, "train")], verbose_eval=False)
    """)
    tracked = run_script(script, tmp_path)
    (tmp_path / "untracked").mkdir()
    untracked = run_script(script.replace("tracker = PyPads()", ""), tmp_path / "untracked")
    assert tracked.returncode == untracked.returncode == 0, tracked.stderr
    said = "FutureWarning: Pass `evals` as keyword args"
    assert untracked.stderr.count(said) == 1 and tracked.stderr.count(said) == 1, tracked.stderr
    # Arguments given by position where XGBoost wants keywords (its demos do) are read all the same.
    parent = only_run(store_of(tmp_path))
    assert parent.params["Booster.max_depth"] == "2" and parent.params["Booster.num_boost_round"] == "2"
    assert len(parent.metric_history("Booster_2.train.rmse")) == 4


def test_a_recorder_pypads_adds_never_breaks_the_training(tmp_path, monkeypatch):
    # LightGBM's own record_evaluation raises KeyError when a callback adds a validation set
    # halfway (LightGBM's python-guide advanced_example.py does): the script must not notice.
    parent, _ = run(DIABETES + textwrap.dedent("""
        import lightgbm as lgb
        train = lgb.Dataset(X_train, y_train, free_raw_data=False)
        def add_a_valid_set(env):
            if env.iteration - env.begin_iteration == 5:
                env.model.add_valid(lgb.Dataset(X_test, y_test, reference=train), "new_valid")
        add_a_valid_set.before_iteration = True
        booster = lgb.train({"objective": "regression", "verbose": -1}, train, 10, valid_sets=[train],
                            callbacks=[add_a_valid_set])
        print("trained", booster.current_iteration())
    """), tmp_path, monkeypatch)
    assert parent.params["Booster.num_boost_round"] == "10"
    # The recording broke at round 5: half a curve would mislead, so there is none.
    assert not [key for key in parent.metrics if key.startswith("Booster.training")], parent.metrics


def test_a_linear_booster_has_its_weights_as_a_table_and_no_chart_of_the_gain_it_lacks(tmp_path, monkeypatch):
    parent, _ = run(BREAST_CANCER + textwrap.dedent("""
        import warnings
        import xgboost as xgb
        warnings.filterwarnings("ignore", message=".*gblinear")  # XGBoost 3.4 deprecates it, to the script
        booster = xgb.train({"booster": "gblinear", "objective": "binary:logistic"}, xgb.DMatrix(X_train, label=y_train), 5)
    """), tmp_path, monkeypatch)
    table = list(csv.DictReader(io.StringIO(parent.artifact_text("Booster/feature_importance.csv"))))
    assert set(table[0]) == {"", "weight"} and len(table) == 30
    assert not [path for path in parent.artifacts() if path.endswith(".png")]
    assert not [key for key in parent.run.data.tags if key.startswith("pypads.failure")], parent.run.data.tags


def test_lightgbm_evaluation_sets_without_names_are_linked_by_lightgbms_own_names(tmp_path, monkeypatch):
    parent, client = run(DIABETES + textwrap.dedent("""
        import lightgbm as lgb
        train = lgb.Dataset(X_train, y_train)
        booster = lgb.train({"objective": "regression", "verbose": -1}, train, 8,
                            valid_sets=[train, lgb.Dataset(X_test, y_test, reference=train)])
    """), tmp_path, monkeypatch)
    assert len(parent.metric_history("Booster.training.l2")) == len(parent.metric_history("Booster.valid_1.l2")) == 8
    linked = {metric.key: metric.dataset_name for metric in logged_model(client, parent, "Booster").metrics}
    assert linked["Booster.training.l2"] == "X_train" and linked["Booster.valid_1.l2"] == "X_test"  # one model: no child run
    assert {(item.dataset.name, item.tags[0].value) for item in parent.run.inputs.dataset_inputs} == {
        ("X_train", "training"), ("X_test", "evaluation")}
