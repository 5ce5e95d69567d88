"""Datasets: each distinct array or DataFrame a script fits, predicts or scores on is one
dataset input of its run, named as the script names it, with its context."""

from __future__ import annotations

import json

from test_models import script_ok


def inputs(run) -> dict[str, tuple[str, str]]:
    """Dataset inputs by name: (context, digest)."""
    found = {}
    for item in run.run.inputs.dataset_inputs:
        context = {tag.key: tag.value for tag in item.tags}["mlflow.data.context"]
        assert item.dataset.name not in found, f"{item.dataset.name} logged twice"
        found[item.dataset.name] = (context, item.dataset.digest)
    return found


def test_data_of_fit_predict_and_metric_are_run_inputs_named_by_the_script_once_each(tmp_path):
    run = script_ok("""
        track()
        from sklearn import datasets, metrics
        from sklearn.model_selection import train_test_split
        from sklearn.tree import DecisionTreeClassifier
        X, y = datasets.load_iris(return_X_y=True)
        X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
        model = DecisionTreeClassifier().fit(X_train, y_train)
        for _ in range(3):
            y_pred = model.predict(X_test)  # the same object: recognised by identity
        model.predict(X_test.copy())  # the same content: recognised by its digest
        metrics.accuracy_score(y_test, y_pred)
        def helper(features):
            return model.predict(features[:5])  # a slice made inside: no name in the caller
        helper(X_test)
    """, tmp_path)
    found = inputs(run)
    assert found["X_train"][0] == "training"
    assert found["X_test"][0] == "evaluation"
    assert found["y_test"][0] == "evaluation"
    unnamed = [name for name in found if name.startswith("dataset-")]
    assert len(found) == 4 and len(unnamed) == 1, found
    assert len({digest for _, digest in found.values()}) == 4
    schema = json.loads(next(item.dataset.schema for item in run.run.inputs.dataset_inputs if item.dataset.name == "X_train"))
    assert "mlflow_tensorspec" in schema and json.loads(schema["mlflow_tensorspec"]["targets"])  # y goes with X
    profile = json.loads(next(item.dataset.profile for item in run.run.inputs.dataset_inputs if item.dataset.name == "X_train"))
    assert profile["num_rows"] == 112


def test_a_dataframe_is_an_input_with_its_columns_and_no_internal_call_adds_one(tmp_path):
    run = script_ok("""
        track()
        from sklearn import datasets
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.model_selection import cross_val_score
        frame = datasets.load_iris(as_frame=True).frame
        features = frame.drop(columns="target")
        RandomForestClassifier(n_estimators=5, random_state=0).fit(features, frame["target"])
        scores = cross_val_score(RandomForestClassifier(n_estimators=3), features, frame["target"], cv=3)
    """, tmp_path)
    found = inputs(run)
    assert found == {"features": ("training", found["features"][1])}  # cross_val_score's X is the same data
    item = run.run.inputs.dataset_inputs[0]
    columns = [column["name"] for column in json.loads(item.dataset.schema)["mlflow_colspec"]]
    assert columns == ["sepal length (cm)", "sepal width (cm)", "petal length (cm)", "petal width (cm)"]
