"""Two models in one script are two comparable rows of MLflow's runs table: a child run
each, with its params, the metrics computed on its predictions and its model. Scripts run
in their own interpreter; the runs are read back here through MlflowClient."""

from __future__ import annotations

import textwrap

import mlflow
import numpy as np
from conftest import run_script, store_of
from mlflow.tracking import MlflowClient
from sklearn.datasets import load_iris
from sklearn.model_selection import train_test_split

SCRIPT = textwrap.dedent("""
    from pypads import PyPads
    tracker = PyPads(name="compare")
    import numpy as np
    from sklearn import datasets
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import accuracy_score, f1_score
    from sklearn.model_selection import train_test_split
    X, y = datasets.load_iris(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.4, random_state=1)
    forest = RandomForestClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X_train, y_train)
    linear = LogisticRegression(C=0.05, max_iter=500).fit(X_train, y_train)
    for model in (forest, linear):
        predicted = model.predict(X_test)
        print(accuracy_score(y_test, predicted), f1_score(y_test, predicted, average="macro"))
    np.save("forest.npy", forest.predict(X_test))
""")

ONE_MODEL = SCRIPT.replace("linear = LogisticRegression(C=0.05, max_iter=500).fit(X_train, y_train)\n", "").replace(
    "(forest, linear)", "(forest,)")


def runs_of(uri: str) -> tuple[mlflow.entities.Run, dict[str, mlflow.entities.Run]]:
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("compare")
    runs = client.search_runs([experiment.experiment_id])
    (parent,) = [run for run in runs if "mlflow.parentRunId" not in run.data.tags]
    children = {run.info.run_name: run for run in runs if run.data.tags.get("mlflow.parentRunId") == parent.info.run_id}
    return parent, children


def test_two_models_in_one_script_are_two_child_runs_with_params_metrics_and_model(tmp_path, monkeypatch):
    result = run_script(SCRIPT, tmp_path)
    assert result.returncode == 0, result.stderr
    scores = [list(map(float, line.split())) for line in result.stdout.split("\n") if line]
    uri = store_of(tmp_path)
    parent, children = runs_of(uri)
    assert set(children) == {"RandomForestClassifier", "LogisticRegression"}
    forest, linear = children["RandomForestClassifier"], children["LogisticRegression"]
    # the same columns, so the runs table compares them: params as scikit-learn spells them...
    assert forest.data.params["max_depth"] == "2" and forest.data.params["n_estimators"] == "5"
    assert linear.data.params["C"] == "0.05" and "max_depth" not in linear.data.params
    # ...and the metrics computed on each model's own predictions, under one name
    assert forest.data.metrics["accuracy_score_X_test"] == scores[0][0]
    assert forest.data.metrics["f1_score_X_test"] == scores[0][1]
    assert linear.data.metrics["accuracy_score_X_test"] == scores[1][0]
    assert forest.data.tags["estimator_class"] == "sklearn.ensemble._forest.RandomForestClassifier"
    assert forest.info.status == linear.info.status == "FINISHED"
    # the parent keeps the whole story, as before
    assert parent.data.metrics["RandomForestClassifier.accuracy_score_X_test"] == scores[0][0]
    assert parent.data.params["LogisticRegression.C"] == "0.05"

    # each child run is its model's source run; the parent lists both models too
    client = MlflowClient(uri)
    models = {model.name: model for model in client.search_logged_models([parent.info.experiment_id])}
    assert set(models) == {"RandomForestClassifier", "LogisticRegression"}
    assert models["RandomForestClassifier"].source_run_id == forest.info.run_id
    assert models["LogisticRegression"].source_run_id == linear.info.run_id
    assert {output.model_id for output in client.get_run(parent.info.run_id).outputs.model_outputs} == {
        model.model_id for model in models.values()}
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setattr(mlflow.tracking._tracking_service.utils, "_tracking_uri", uri)
    loaded = mlflow.sklearn.load_model(f"models:/{models['RandomForestClassifier'].model_id}")
    X, y = load_iris(return_X_y=True)
    X_test = train_test_split(X, y, test_size=0.4, random_state=1)[1]
    assert (loaded.predict(X_test) == np.load(tmp_path / "forest.npy")).all()


def test_a_script_with_one_model_gets_no_child_run(tmp_path):
    result = run_script(ONE_MODEL, tmp_path)
    assert result.returncode == 0, result.stderr
    parent, children = runs_of(store_of(tmp_path))
    assert children == {}
    assert "RandomForestClassifier.accuracy_score_X_test" in parent.data.metrics


def test_a_loop_over_one_hyper_parameter_logs_what_varies_once_per_model(tmp_path):
    sweep = textwrap.dedent("""
        from pypads import PyPads
        tracker = PyPads(name="compare")
        from sklearn import datasets
        from sklearn.linear_model import LogisticRegression
        X, y = datasets.load_iris(return_X_y=True)
        for C in (1.0, 0.1, 0.01):
            LogisticRegression(C=C, max_iter=500).fit(X, y)
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
        from sklearn.tree import DecisionTreeClassifier
        for model in (LogisticRegression(max_iter=500), DecisionTreeClassifier(max_depth=2)):
            make_pipeline(StandardScaler(), model).fit(X, y)
    """)
    result = run_script(sweep, tmp_path)
    assert result.returncode == 0, result.stderr
    parent, children = runs_of(store_of(tmp_path))
    params = parent.data.params
    # the first model has all of its params; the others what differs, and whose the rest are
    assert params["LogisticRegression.C"] == "1.0" and params["LogisticRegression.max_iter"] == "500"
    assert {key: value for key, value in params.items() if key.startswith("LogisticRegression_1.")} == {
        "LogisticRegression_1.C": "0.1", "LogisticRegression_1.other_params_as": "LogisticRegression"}
    assert params["LogisticRegression_2.C"] == "0.01" and "LogisticRegression_2.max_iter" not in params
    # pipelines of other steps have other param names: each has all of its own
    assert params["Pipeline_1.decisiontreeclassifier__max_depth"] == "2"
    assert "Pipeline_1.other_params_as" not in params and "Pipeline_1.logisticregression__C" not in params
    # each model's own row keeps all of its params, so the runs table compares them
    assert children["LogisticRegression_2"].data.params["C"] == "0.01"
    assert children["LogisticRegression_2"].data.params["max_iter"] == "500"


def test_each_model_page_has_its_params_its_scores_on_named_data_and_each_child_run_its_own_fit_and_datasets(tmp_path):
    result = run_script(SCRIPT, tmp_path)
    assert result.returncode == 0, result.stderr
    uri = store_of(tmp_path)
    parent, children = runs_of(uri)
    client = MlflowClient(uri)
    models = {model.name: model for model in client.search_logged_models([parent.info.experiment_id])}
    assert set(models) == {"RandomForestClassifier", "LogisticRegression"}
    data = {item.dataset.name: item.dataset.digest for item in parent.inputs.dataset_inputs}
    for name, model in models.items():
        assert model.source_run_id == children[name].info.run_id
        scores = {metric.key: metric for metric in model.metrics}
        # the script's scores on X_test, and the training scores pypads computed on X_train
        assert {key for key in scores if not key.startswith("training_")} == {"accuracy_score_X_test", "f1_score_X_test"}
        assert {"training_accuracy_score", "training_f1_score"} <= set(scores)
        assert all(scores[key].dataset_name == "X_test" and scores[key].dataset_digest == data["X_test"]
                   for key in ("accuracy_score_X_test", "f1_score_X_test"))
        assert scores["training_accuracy_score"].dataset_name == "X_train"
        assert scores["accuracy_score_X_test"].value == children[name].data.metrics["accuracy_score_X_test"]
        child = children[name]
        assert {item.dataset.name: [tag.value for tag in item.tags] for item in child.inputs.dataset_inputs} == {
            "X_train": ["training"], "X_test": ["evaluation"]}
        # One point in the run's history, though the model's page has the score too.
        assert len(client.get_metric_history(child.info.run_id, "accuracy_score_X_test")) == 1
        # The child run spans its own fit, not the script.
        assert parent.info.start_time <= child.info.start_time <= child.info.end_time <= parent.info.end_time
        assert child.info.end_time - child.info.start_time < parent.info.end_time - parent.info.start_time
    assert models["RandomForestClassifier"].params["max_depth"] == "2"
    assert models["LogisticRegression"].params["C"] == "0.05"
    assert children["RandomForestClassifier"].info.start_time != children["LogisticRegression"].info.start_time


def test_the_page_of_a_scripts_only_model_has_its_params_and_its_scores_on_named_data(tmp_path):
    result = run_script(ONE_MODEL, tmp_path)
    assert result.returncode == 0, result.stderr
    parent, _ = runs_of(store_of(tmp_path))
    client = MlflowClient(store_of(tmp_path))
    (model,) = client.search_logged_models([parent.info.experiment_id])
    assert model.source_run_id == parent.info.run_id
    assert model.params["n_estimators"] == "5"
    scores = {metric.key: metric.dataset_name for metric in model.metrics}
    assert {key: name for key, name in scores.items() if ".training_" not in key} == {
        "RandomForestClassifier.accuracy_score_X_test": "X_test", "RandomForestClassifier.f1_score_X_test": "X_test"}
    assert scores["RandomForestClassifier.training_accuracy_score"] == "X_train"
