"""Journal entries that become more than values: dataset inputs and child runs."""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np
from mlflow.data.schema import TensorDatasetSchema
from mlflow.entities import Dataset, DatasetInput, InputTag
from mlflow.tracking import MlflowClient
from mlflow.types.schema import ColSpec, DataType, Schema, TensorSpec

from pypads.connection.entities import MlflowCaller, Warn, direct, write_entities
from pypads.journal.reading import Batch


def log_datasets(client: MlflowClient, run_id: str, entries: list[dict[str, Any]], call: MlflowCaller = direct) -> None:
    """The "dataset" entries as the run's dataset inputs, with the context (``training``,
    ``evaluation``) as MLflow's ``mlflow.data.context`` tag."""
    source = json.dumps({"tags": {"mlflow.source.name": sys.argv[0] if sys.argv else ""}})
    inputs = [DatasetInput(Dataset(entry["name"], entry["digest"], "code", source, _dataset_schema(entry),
                                   json.dumps(entry.get("profile", {}))),
                           tags=[InputTag("mlflow.data.context", entry["context"])]) for entry in entries]
    call(client.log_inputs, run_id, inputs)


def _dataset_schema(entry: dict[str, Any]) -> str | None:
    features, targets = schema_of(entry.get("features")), schema_of(entry.get("targets"))
    if features is None:
        return None
    if entry["features"]["kind"] == "frame":  # what MLflow's pandas datasets write
        return json.dumps({"mlflow_colspec": features.to_dict()})
    # MLflow checks for and accepts targets=None; only its annotation says Schema.
    return json.dumps(TensorDatasetSchema(features=features, targets=targets).to_dict())  # type: ignore[arg-type]


def schema_of(described: dict[str, Any] | None) -> Schema | None:
    """An MLflow schema from the logger's description of an array, Series or DataFrame
    (dtypes and shape, see ``pypads.loggers.datasets.describe``): no data needed."""
    if not described or described.get("kind") not in {"array", "frame", "series"}:
        return None
    if described["kind"] == "frame":
        return Schema([ColSpec(_column_type(dtype), str(name)) for name, dtype in zip(described["columns"], described["dtypes"])])
    if described["kind"] == "series":
        return Schema([ColSpec(_column_type(described["dtype"]))])
    return Schema([TensorSpec(np.dtype(described["dtype"]), (-1, *described["shape"][1:]))])


def _column_type(dtype: str) -> DataType:
    try:
        return DataType.from_numpy_type(np.dtype(dtype)) or DataType.string
    except TypeError:  # pandas' own dtypes (category, string)
        return DataType.string


def log_child_runs(client: MlflowClient, run_id: str, entries: list[dict[str, Any]], warn: Warn,
                   call: MlflowCaller = direct, *, experiment_id: str | None = None) -> dict[str, str]:
    """Each "child_run" entry as a run of its own under ``run_id`` (MLflow's tag
    ``mlflow.parentRunId``) in ``experiment_id`` (by default the parent's), created,
    filled and ended at once. Returns the child run of each model label (entries of the
    model comparison), for its model to name as source."""
    if experiment_id is None:
        experiment_id = call(client.get_run, run_id).info.experiment_id
    by_label = {}
    for entry in entries:
        tags = {**entry.get("tags", {}), "mlflow.parentRunId": run_id}
        child = call(client.create_run, experiment_id, entry.get("start_time"), tags, entry.get("name"))
        child_id = child.info.run_id
        steps = entry.get("steps", {})
        batch = Batch(params=dict(entry.get("params", {})), tags={},
                      metrics=[(key, value, entry.get("timestamp", 0), steps.get(key, 0))
                               for key, value in entry.get("metrics", {}).items()])
        write_entities(client, child_id, batch, warn, call)
        call(client.set_terminated, child_id, "FINISHED", entry.get("end_time"))
        if entry.get("model_label"):
            by_label[entry["model_label"]] = child_id
    return by_label
