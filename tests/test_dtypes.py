"""Every kind of data numpy and pandas offer, as features, as targets and as a metric's
input, ends in a FINISHED run with all of its datasets and its models: string class
labels are the most ordinary of targets, and one value MLflow cannot describe must
never keep the rest of a run out of the store."""

from __future__ import annotations

import json
import sys

import mlflow
from conftest import only_run, run_script
from mlflow.models import Model

# One value of each dtype, 12 rows each; distinct contents, so each is a dataset of its own.
DATA = """
import numpy as np, pandas as pd
n = 12
labels = np.array(["setosa", "versicolor", "virginica"])[np.arange(n) % 3]
VALUES = {
    "unicode": labels,
    "bytes": labels.astype("S"),
    "object": labels.astype(object),
    "mixed_object": np.array([1, "a", 2.5, None] * 3, dtype=object),
    "categorical": pd.Categorical(labels),
    "category_series": pd.Series(labels, dtype="category"),
    "string_series": pd.Series(labels, dtype="string"),
    "datetime": np.arange(n).astype("datetime64[D]"),
    "timedelta": np.arange(n).astype("timedelta64[s]"),
    "bool": np.arange(n) % 2 == 0,
    "complex": np.arange(n) + 1j,
    "nullable_int": pd.array([1, 2, None] * 4, dtype="Int64"),
    "structured": np.array([(i, float(i), "abc"[i % 3]) for i in range(n)], dtype=[("a", "<i4"), ("b", "<f8"), ("c", "U1")]),
    "frame": pd.DataFrame({"text": labels, "kind": pd.Categorical(labels), "count": pd.array([1, None, 3] * 4, dtype="Int64"),
                           "when": pd.date_range("2020-01-01", periods=n, tz="UTC"), "took": pd.to_timedelta(np.arange(n), unit="s"),
                           "flag": pd.array([True, False, None] * 4, dtype="boolean"), "blob": [b"x"] * n,
                           "period": pd.period_range("2020", periods=n, freq="D"), "z": np.arange(n) + 2j}),
}
"""


def pypads_spoke(stderr: str) -> bool:
    """Whether pypads said anything. scikit-learn's own warnings about the script's odd
    data name their file, which lies in an environment that CI names .venvs/pypads-…:
    that path is not pypads speaking."""
    said = stderr.replace(sys.prefix, "<environment>")
    return "pypads" in said or "could not" in said


def test_every_dtype_as_features_targets_and_metric_input_ends_finished_with_all_datasets(tmp_path, home_with_store):
    result = run_script(f"""
from pypads import PyPads
tracker = PyPads(name="dtypes")
{DATA}
from sklearn.dummy import DummyClassifier
from sklearn.metrics import accuracy_score
from sklearn.preprocessing import FunctionTransformer
numbers = np.arange(n * 2, dtype=float).reshape(n, 2)
failed = []
for kind, value in VALUES.items():
    for what, step in (("X", lambda: FunctionTransformer().fit(value)),
                       ("y", lambda: DummyClassifier().fit(numbers, value)),
                       ("metric", lambda: accuracy_score(value, value))):
        try:
            step()
        except Exception as error:  # what scikit-learn itself refuses: the script's own error
            failed.append(f"{{kind}} as {{what}}: {{type(error).__name__}}")
assert not [failure for failure in failed if "LoggerFailure" in failure], failed  # PYPADS_STRICT is on in tests
""", tmp_path)
    assert result.returncode == 0, result.stderr
    assert not pypads_spoke(result.stderr), result.stderr
    run = only_run(f"sqlite:///{tmp_path / 'home' / 'mlflow.db'}")
    assert run.status == "FINISHED"
    datasets = {item.dataset.digest: item.dataset for item in run.run.inputs.dataset_inputs}
    # Two fits of each kind: the value as features and (with its own digest) as the targets of `numbers`.
    assert len(datasets) >= 10, sorted(datasets)
    for dataset in datasets.values():
        assert dataset.schema is None or json.loads(dataset.schema)
    assert run.artifacts("calls"), "the call records were uploaded"


def test_string_class_labels_give_a_model_with_a_signature_and_every_part_of_the_run(tmp_path, home_with_store):
    result = run_script("""
from pypads import PyPads
tracker = PyPads(name="labels")
import numpy as np
from sklearn import datasets
from sklearn.tree import DecisionTreeClassifier
X, y = datasets.load_iris(return_X_y=True)
labels = np.array(["setosa", "versicolor", "virginica"])[y]
model = DecisionTreeClassifier().fit(X, labels)
model.predict(X[:5])
""", tmp_path)
    assert result.returncode == 0, result.stderr
    assert not pypads_spoke(result.stderr), result.stderr
    run = only_run(f"sqlite:///{tmp_path / 'home' / 'mlflow.db'}")
    assert run.status == "FINISHED"
    schema = json.loads(next(item.dataset.schema for item in run.run.inputs.dataset_inputs if item.dataset.name == "X"))
    targets = json.loads(schema["mlflow_tensorspec"]["targets"])
    assert targets[0]["tensor-spec"]["dtype"] == "str"
    models = run.client.search_logged_models([run.run.info.experiment_id])
    assert [model.name for model in models] == ["DecisionTreeClassifier"]
    local = mlflow.artifacts.download_artifacts(artifact_uri=models[0].artifact_location, dst_path=str(tmp_path / "model"))
    signature = Model.load(local).signature
    assert signature.outputs.to_dict()[0]["tensor-spec"]["dtype"] == "str"


def test_a_dataset_mlflow_refuses_is_left_out_with_a_warning_and_the_rest_is_uploaded(tmp_path, home_with_store):
    # A thousand column names of 1,100 characters: a schema past MLflow's 1 MB limit.
    result = run_script("""
from pypads import PyPads
tracker = PyPads(name="refused")
import numpy as np, pandas as pd
from sklearn.tree import DecisionTreeRegressor
wide = pd.DataFrame(np.zeros((3, 1000)), columns=[f"{i:04d}" + "c" * 1100 for i in range(1000)])
small = np.arange(6.0).reshape(3, 2)
DecisionTreeRegressor().fit(wide, [1.0, 2.0, 3.0])
DecisionTreeRegressor().fit(small, [1.0, 2.0, 3.0])
""", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "refused the schema or profile of dataset 'wide'" in result.stderr
    run = only_run(f"sqlite:///{tmp_path / 'home' / 'mlflow.db'}")
    assert run.status == "FINISHED"
    datasets = {item.dataset.name: item.dataset for item in run.run.inputs.dataset_inputs}
    assert sorted(datasets) == ["small", "wide"]
    assert datasets["wide"].schema in (None, "") and json.loads(datasets["small"].schema)
    assert len(run.client.search_logged_models([run.run.info.experiment_id])) == 2
