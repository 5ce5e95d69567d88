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


def test_score_of_a_search_or_a_pipeline_adds_no_dataset_from_inside_it(tmp_path):
    run = script_ok("""
        track()
        from sklearn import datasets
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
        from sklearn.pipeline import Pipeline
        from sklearn.preprocessing import StandardScaler
        from sklearn.tree import DecisionTreeClassifier
        X, y = datasets.load_iris(return_X_y=True)
        X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
        search = GridSearchCV(DecisionTreeClassifier(random_state=0), {"max_depth": [2, 3]}, cv=3).fit(X_train, y_train)
        search.score(X_test, y_test)
        pipe = Pipeline([("scale", StandardScaler()), ("clf", LogisticRegression())]).fit(X_train, y_train)
        pipe.score(X_test, y_test)  # its step predicts on the scaled X_test, which the script never saw
        GridSearchCV(pipe, {"clf__C": [0.5, 1.0]}, cv=3).fit(X_train, y_train).score(X_test, y_test)
        cross_val_score(pipe, X_train, y_train, cv=3)
        LogisticRegression(C=2.0).fit(X_train, y_train)  # the script's first LogisticRegression
    """, tmp_path)
    found = inputs(run)
    assert {name: context for name, (context, _) in found.items()} == {
        "X_train": "training", "X_test": "evaluation", "y_test": "evaluation"}
    assert run.params["LogisticRegression.C"] == "2.0"  # the pipeline's step took no label


def lines(run, path: str) -> list[dict]:
    return [json.loads(line) for line in run.artifact_text(path).splitlines()]


def test_calls_refer_to_datasets_and_a_loop_of_predicts_adds_no_files(tmp_path):
    run = script_ok("""
        from pypads.recording.loggers import Input, Output
        EVENTS["input"] = {"on": ["pypads_fit", "pypads_predict", "pypads_metric"], "depth": 0}
        LOGGERS.update(input=Input(layout="function"), output=Output(layout="function"))
        track()
        from sklearn import datasets, metrics
        from sklearn.model_selection import train_test_split
        from sklearn.tree import DecisionTreeClassifier
        X, y = datasets.load_iris(return_X_y=True)
        X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
        model = DecisionTreeClassifier(max_depth=3).fit(X_train, y_train)
        for _ in range(200):
            y_pred = model.predict(X_test)
        metrics.accuracy_score(y_test, y_pred, normalize=True)
        try:
            model.predict(X_test[:, :2])
        except ValueError:
            pass
    """, tmp_path)
    calls = run.artifacts("calls")
    assert calls == ["calls/DecisionTreeClassifier.fit.jsonl", "calls/DecisionTreeClassifier.predict.jsonl",
                     "calls/accuracy_score.jsonl"]
    assert [name for name in inputs(run)].count("X_test") == 1
    header, *predicts = lines(run, "calls/DecisionTreeClassifier.predict.jsonl")
    assert header["provenance"]["logger"] in {"Input", "Output"}
    digest = inputs(run)["X_test"][1]
    given = [line["inputs"]["X"] for line in predicts if "inputs" in line]
    assert len(given) == 201 and given[0] == {"dataset": "X_test", "digest": digest}
    assert given.count(given[0]) == 200  # the sliced X_test of the last call is no dataset
    outputs = [line for line in predicts if "output" in line]
    assert len(outputs) == 200 and outputs[0]["output"].startswith("[2, 1, 0")
    assert predicts[-1]["call"] == 201 and predicts[-1]["exception"].startswith("ValueError: X has 2 features")
    fit = lines(run, "calls/DecisionTreeClassifier.fit.jsonl")[1]
    assert fit["inputs"]["y"] == {"dataset": "X_train", "digest": inputs(run)["X_train"][1], "part": "targets"}
    score = lines(run, "calls/accuracy_score.jsonl")[1]
    assert score["inputs"]["y_true"]["dataset"] == "y_test" and score["inputs"]["normalize"] is True


def test_large_values_in_a_call_log_are_summarised_and_pickles_stay_files(tmp_path):
    run = script_ok("""
        from pypads.recording.loggers import Input, Output
        EVENTS["input"] = {"on": ["pypads_fit", "pypads_predict"], "depth": 0}
        EVENTS["pickled"] = {"on": ["pypads_fit"], "depth": 0}
        LOGGERS.update(input=Input(layout="function", max_inline=100), output=Output(layout="function", max_inline=100),
                       pickled=Input(write_format="pickle"))
        track()
        from sklearn.linear_model import Ridge
        rng = np.random.default_rng(0)
        X, y = rng.normal(size=(50, 3)), rng.normal(size=50)
        model = Ridge().fit(X, y, sample_weight=np.ones(50))
        model.predict(X)
    """, tmp_path)
    fit = lines(run, "calls/Ridge.fit.jsonl")[1]
    summary = fit["inputs"]["sample_weight"]["summary"]
    assert summary["shape"] == [50] and summary["dtype"] == "float64" and len(summary["blake3"]) == 64
    predicted = [line for line in lines(run, "calls/Ridge.predict.jsonl") if "output" in line][0]["output"]
    assert predicted["summary"]["shape"] == [50]
    assert "calls/0001_Ridge.fit/input/X.pickle" in run.artifacts("calls")  # asked for: copies to load again
