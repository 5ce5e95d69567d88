"""Models: each estimator the script fitted is an MLflow model of the run, loadable with
mlflow.sklearn and mlflow.pyfunc, predicting what the script predicted. Scripts run in
their own interpreter; the models are read back here through MlflowClient."""

from __future__ import annotations

import textwrap
from pathlib import Path

import mlflow
import numpy as np
from conftest import RunView, run_script, store_of
from mlflow.tracking import MlflowClient

# The loggers of issue 11 switched on explicitly (the defaults may or may not have them).
PRELUDE = textwrap.dedent("""
    import copy
    import numpy as np
    from pypads import PyPads
    from pypads.recording.defaults import DEFAULT_CONFIG
    from pypads.recording.loggers import CrossValidation, Datasets, Model, Search
    EVENTS = {**copy.deepcopy(DEFAULT_CONFIG["events"]),
              "model": {"on": ["pypads_fit", "pypads_partial_fit"]}, "search": {"on": ["pypads_fit"]},
              "datasets": {"on": ["pypads_fit", "pypads_predict", "pypads_metric", "pypads_cross_validate"]},
              "crossval": {"on": ["pypads_cross_validate"]}}
    LOGGERS = {"model": Model(), "datasets": Datasets(), "search": Search(), "crossval": CrossValidation()}
    CV_MAPPING = {"metadata": {"library": "sklearn", "distribution": "scikit-learn", "library_versions": ">=1.0,<2",
                               "mapping_version": "1.0.0", "author": "tests"},
                  "algorithms": [{"name": "cross-validation", "implementation": {"sklearn": "sklearn.model_selection"},
                                  "hooks": {"pypads_cross_validate": ["cross_validate", "cross_val_score"]}}]}
    def track(**config):
        return PyPads(name="issue11", config={"events": EVENTS, **config}, logging_fns=LOGGERS, mapping=CV_MAPPING)
""")


def parent_run(uri: str) -> RunView:
    """The script's run (not a child run of it)."""
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("issue11")
    runs = [run for run in client.search_runs([experiment.experiment_id]) if "mlflow.parentRunId" not in run.data.tags]
    assert len(runs) == 1, [run.info.run_name for run in runs]
    return RunView(uri, runs[0].info.run_id)


def script_ok(code: str, tmp_path: Path) -> RunView:
    result = run_script(PRELUDE + textwrap.dedent(code), tmp_path)
    assert result.returncode == 0, result.stderr
    assert "pypads logger" not in result.stderr, result.stderr
    return parent_run(store_of(tmp_path))


def logged_models(run: RunView) -> dict[str, mlflow.entities.LoggedModel]:
    """The models listed among the run's outputs (a model's source run is a child run
    when the run compares two models or more)."""
    listed = {output.model_id for output in run.client.get_run(run.run_id).outputs.model_outputs}
    models = run.client.search_logged_models([run.run.info.experiment_id])
    return {model.name: model for model in models if model.model_id in listed}


def use_store(uri, monkeypatch):
    """Load models from ``uri``, for this test only: a URI an earlier test set in this
    process with mlflow.set_tracking_uri would win over the environment."""
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setattr(mlflow.tracking._tracking_service.utils, "_tracking_uri", uri)


def test_a_tree_a_pipeline_and_a_search_load_with_both_loaders_and_predict_as_the_script_did(tmp_path, monkeypatch):
    run = script_ok("""
        track()
        import pandas as pd
        from sklearn import datasets
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import GridSearchCV
        from sklearn.pipeline import Pipeline
        from sklearn.preprocessing import StandardScaler
        from sklearn.tree import DecisionTreeClassifier
        frame = datasets.load_iris(as_frame=True)
        X, y = frame.data, frame.target
        tree = DecisionTreeClassifier(max_depth=2).fit(X.values, y.values)
        pipe = Pipeline([("scale", StandardScaler()), ("clf", LogisticRegression(max_iter=500))]).fit(X, y)
        search = GridSearchCV(DecisionTreeClassifier(random_state=0), {"max_depth": [1, 3]}, cv=3).fit(X.values, y.values)
        np.save("tree.npy", tree.predict(X.values))
        np.save("pipe.npy", pipe.predict(X))
        np.save("search.npy", search.predict(X.values))
        X.to_pickle("X.pkl")
    """, tmp_path)
    models = logged_models(run)
    assert set(models) == {"DecisionTreeClassifier", "Pipeline", "GridSearchCV", "GridSearchCV-best_estimator"}
    # three estimators (the search saved as itself and as its refit model): each one's source is its child run
    sources = {model.source_run_id for model in models.values()}
    assert models["GridSearchCV"].source_run_id == models["GridSearchCV-best_estimator"].source_run_id
    assert len(sources) == 3 and all(run.client.get_run(source).data.tags["mlflow.parentRunId"] == run.run_id
                                     for source in sources)
    assert {output.model_id for output in run.run.outputs.model_outputs} == {model.model_id for model in models.values()}
    use_store(run.uri, monkeypatch)
    import pandas as pd
    X = pd.read_pickle(tmp_path / "X.pkl")
    for name, data, expected in [("DecisionTreeClassifier", X.values, "tree.npy"), ("Pipeline", X, "pipe.npy"),
                                 ("GridSearchCV-best_estimator", X.values, "search.npy"),
                                 ("GridSearchCV", X.values, "search.npy")]:
        uri = f"models:/{models[name].model_id}"
        script_predicted = np.load(tmp_path / expected)
        assert (mlflow.sklearn.load_model(uri).predict(data) == script_predicted).all()
        pyfunc = mlflow.pyfunc.load_model(uri)
        assert (np.asarray(pyfunc.predict(data)).ravel() == script_predicted).all()
        assert pyfunc.metadata.signature is not None
    pipe_inputs = mlflow.pyfunc.load_model(f"models:/{models['Pipeline'].model_id}").metadata.signature.inputs
    assert pipe_inputs.input_names() == list(X.columns)  # a DataFrame's columns make the signature
    assert models["Pipeline"].tags["estimator_class"] == "sklearn.pipeline.Pipeline"


def test_only_the_final_state_of_estimators_the_script_fitted_is_saved(tmp_path, monkeypatch):
    run = script_ok("""
        track()
        from sklearn import datasets
        from sklearn.model_selection import cross_val_score
        from sklearn.tree import DecisionTreeClassifier
        X, y = datasets.load_iris(return_X_y=True)
        tree = DecisionTreeClassifier(max_depth=1, random_state=0).fit(X, y)
        tree.set_params(max_depth=4).fit(X, y)  # refit: its final state is the model
        for _ in range(3):
            DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)  # the same state again: saved once
        cross_val_score(DecisionTreeClassifier(), X, y, cv=3)  # its fits are scikit-learn's, not models
        np.save("tree.npy", tree.predict(X))
    """, tmp_path)
    models = logged_models(run)
    assert list(models) == ["DecisionTreeClassifier"], list(models)
    use_store(run.uri, monkeypatch)
    loaded = mlflow.sklearn.load_model(f"models:/{models['DecisionTreeClassifier'].model_id}")
    assert loaded.max_depth == 4
    from sklearn import datasets
    X, _ = datasets.load_iris(return_X_y=True)
    assert (loaded.predict(X) == np.load(tmp_path / "tree.npy")).all()


def test_estimators_made_in_a_loop_each_keep_their_model(tmp_path):
    # Each Ridge is gone when the next is made, so Python hands the next one the same id:
    # that must not make two estimators one model.
    run = script_ok("""
        track()
        from sklearn import datasets
        from sklearn.linear_model import Ridge
        X, y = datasets.load_diabetes(return_X_y=True)
        for alpha in (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0):
            Ridge(alpha=alpha).fit(X, y)
    """, tmp_path)
    assert len(logged_models(run)) == 6


def test_an_estimator_fitted_on_lists_is_saved_without_a_signature(make_tracker, read_run):
    from sklearn.tree import DecisionTreeClassifier

    tracker = make_tracker()
    DecisionTreeClassifier().fit([[0], [1]], [0, 1])
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    models = logged_models(run)
    assert list(models) == ["DecisionTreeClassifier"]
    assert str(models["DecisionTreeClassifier"].status) in {"READY", "LoggedModelStatus.READY"}


def test_models_are_switched_off_by_name_and_an_unpicklable_estimator_is_a_tag(tmp_path):
    run = script_ok("""
        track(disabled=["Model"])
        from sklearn import datasets
        from sklearn.tree import DecisionTreeClassifier
        X, y = datasets.load_iris(return_X_y=True)
        DecisionTreeClassifier().fit(X, y)
    """, tmp_path)
    assert logged_models(run) == {}

    other = tmp_path / "other"
    other.mkdir()
    run = script_ok("""
        import threading
        track()
        from sklearn import datasets
        from sklearn.tree import DecisionTreeClassifier
        X, y = datasets.load_iris(return_X_y=True)
        tree = DecisionTreeClassifier().fit(X, y)
        tree.lock = threading.Lock()  # cannot be pickled
        tree.fit(X, y)
    """, other)
    assert "cannot be pickled" in run.tags["pypads.models.DecisionTreeClassifier"]


def test_a_fitted_transformer_loads_with_mlflow_sklearn_and_says_it_has_no_pyfunc(tmp_path, monkeypatch):
    run = script_ok("""
        track()
        from sklearn import datasets
        from sklearn.preprocessing import StandardScaler
        X, y = datasets.load_iris(return_X_y=True)
        np.save("scaled.npy", StandardScaler().fit(X).transform(X))
    """, tmp_path)
    model = logged_models(run)["StandardScaler"]
    use_store(run.uri, monkeypatch)
    uri = f"models:/{model.model_id}"
    from sklearn import datasets
    X, _ = datasets.load_iris(return_X_y=True)
    assert np.allclose(mlflow.sklearn.load_model(uri).transform(X), np.load(tmp_path / "scaled.npy"))
    assert "python_function" not in mlflow.models.get_model_info(uri).flavors
    try:
        mlflow.pyfunc.load_model(uri)
    except mlflow.exceptions.MlflowException as error:
        assert "python_function" in str(error)
    else:
        raise AssertionError("a transformer has no pyfunc flavour to load")


def test_an_estimator_trained_by_partial_fit_is_saved_once_in_its_final_state(tmp_path, monkeypatch):
    run = script_ok("""
        track()
        from sklearn import datasets
        from sklearn.linear_model import SGDClassifier
        X, y = datasets.load_iris(return_X_y=True)
        model = SGDClassifier(random_state=0)
        for start in range(0, 150, 10):  # 15 batches of a shuffled iris
            batch = np.random.RandomState(start).permutation(150)[:30]
            model.partial_fit(X[batch], y[batch], classes=[0, 1, 2])
        np.save("sgd.npy", model.predict(X))
    """, tmp_path)
    models = logged_models(run)
    assert list(models) == ["SGDClassifier"]
    model = models["SGDClassifier"]
    assert model.tags["pypads.call"] == "SGDClassifier.partial_fit#1"
    use_store(run.uri, monkeypatch)
    from sklearn import datasets
    X, _ = datasets.load_iris(return_X_y=True)
    expected = np.load(tmp_path / "sgd.npy")
    assert (mlflow.sklearn.load_model(f"models:/{model.model_id}").predict(X) == expected).all()
    assert (np.asarray(mlflow.pyfunc.load_model(f"models:/{model.model_id}").predict(X)) == expected).all()
