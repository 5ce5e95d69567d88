"""Journal entries that become more than values: dataset inputs and child runs."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
from mlflow.data.schema import TensorDatasetSchema
from mlflow.entities import Dataset, DatasetInput, InputTag
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient
from mlflow.types.schema import ColSpec, DataType, Schema, TensorSpec

from pypads.to_mlflow.connection.entities import MlflowCaller, Warn, direct, write_entities
from pypads.to_mlflow.journal.reading import Batch


def log_datasets(client: MlflowClient, run_id: str, entries: list[dict[str, Any]], warn: Warn,
                 call: MlflowCaller = direct) -> None:
    """The "dataset" entries as the run's dataset inputs, with the context (``training``,
    ``evaluation``) as MLflow's ``mlflow.data.context`` tag. A dataset MLflow refuses is
    left out with a warning naming it; the others are logged all the same."""
    source = json.dumps({"tags": {"mlflow.source.name": sys.argv[0] if sys.argv else ""}})
    inputs = []
    for entry in entries:
        try:
            inputs.append(DatasetInput(Dataset(entry["name"], entry["digest"], "code", source, _dataset_schema(entry),
                                               json.dumps(entry.get("profile", {}))),
                                       tags=[InputTag("mlflow.data.context", entry["context"])]))
        except (KeyError, TypeError, ValueError) as error:  # a journal line written by hand, or damaged
            warn(f"dataset:{entry.get('name')}", f"pypads left out dataset {entry.get('name')!r}, "
                 f"whose journal entry is not well formed: {type(error).__name__}: {error}")
    _log_inputs(client, run_id, inputs, warn, call)


def _log_inputs(client: MlflowClient, run_id: str, inputs: list[DatasetInput], warn: Warn, call: MlflowCaller) -> None:
    """One ``log_inputs`` call; halved, as a refused ``log_batch`` is, until each refused
    dataset stands alone and is dropped. Other errors (the store's) are raised: the
    journal keeps the datasets."""
    if not inputs:
        return
    try:
        _log_inputs_once_more_after_a_race(client, run_id, inputs, call)
    except MlflowException as error:
        if error.error_code != "INVALID_PARAMETER_VALUE":
            raise
        if len(inputs) == 1:
            _log_refused_input(client, run_id, inputs[0], error, warn, call)
            return
        for part in (inputs[: len(inputs) // 2], inputs[len(inputs) // 2 :]):
            _log_inputs(client, run_id, part, warn, call)


# How the databases MLflow's SQL store runs on word a second insert of a unique key:
# PostgreSQL and SQLite ("unique constraint"), MySQL ("Duplicate entry"), SQL Server.
_UNIQUE_KEY_REFUSED = ("unique constraint", "duplicate entry", "unique key constraint")


def _log_inputs_once_more_after_a_race(client: MlflowClient, run_id: str, inputs: list[DatasetInput],
                                       call: MlflowCaller) -> None:
    """``log_inputs``, again if another script created one of the same datasets in the
    same experiment at the same moment. MLflow looks a dataset up, then inserts it; two
    scripts that log one dataset at once (a team's runs on the same data) both insert,
    and the second is refused for the unique key (experiment, name, digest). The first
    one's dataset is in the store by then, so the second try links it."""
    try:
        call(client.log_inputs, run_id, inputs)
    except MlflowException as error:
        if not any(words in error.message.lower() for words in _UNIQUE_KEY_REFUSED):
            raise
        call(client.log_inputs, run_id, inputs)


def _log_refused_input(client: MlflowClient, run_id: str, refused: DatasetInput, error: MlflowException, warn: Warn,
                       call: MlflowCaller) -> None:
    """A dataset MLflow refused, once more without its schema and profile (what grows
    with the data: a thousand long column names pass MLflow's 1 MB limit); dropped if
    even its name and digest are refused."""
    dataset = refused.dataset
    name = dataset.name
    try:
        call(client.log_inputs, run_id, [DatasetInput(Dataset(name, dataset.digest, dataset.source_type, dataset.source),
                                                      tags=refused.tags)])
    except MlflowException as again:
        if again.error_code != "INVALID_PARAMETER_VALUE":
            raise
        warn(f"dataset:{name}", f"MLflow refused dataset {name[:100]!r}, left out: {again.message}")
        return
    warn(f"dataset:{name}", f"MLflow refused the schema or profile of dataset {name!r}, logged without them: {error.message}")


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
    (dtypes and shape, see ``pypads.recording.content.catalogue.describe``): no data needed. None
    for a value of no such kind, or one whose description came from a journal that is
    not well formed: a dataset or a model then goes without a schema, never without
    itself."""
    try:
        return _schema_of(described)
    except (KeyError, TypeError, ValueError, MlflowException):
        return None


def _schema_of(described: dict[str, Any] | None) -> Schema | None:
    if not described or described.get("kind") not in {"array", "sparse", "frame", "series"}:
        return None
    if described["kind"] == "frame":
        return Schema([ColSpec(_column_type(dtype), str(name)) for name, dtype in zip(described["columns"], described["dtypes"])])
    if described["kind"] == "series":
        return Schema([ColSpec(_column_type(described["dtype"]))])
    if described.get("fields"):  # a structured array: a column per field, as a frame's
        return Schema([ColSpec(_column_type(dtype), str(name)) for name, dtype in described["fields"]])
    # An array, or a sparse matrix (described by its dtype and shape, never densified)
    return Schema([TensorSpec(_tensor_dtype(described["dtype"]), (-1, *described["shape"][1:]))])


def _tensor_dtype(text: str) -> np.dtype[Any]:
    """The dtype of a tensor spec: MLflow takes strings and bytes only without a length
    (``<U10`` is refused; string class labels are the most common of targets)."""
    dtype = np.dtype(text)
    if dtype.kind == "U":
        return np.dtype(str)
    if dtype.kind == "S":
        return np.dtype(bytes)
    return dtype


def _column_type(dtype: str) -> DataType:
    try:
        # MLflow leaves this classmethod unannotated
        found: DataType | None = DataType.from_numpy_type(np.dtype(dtype))  # type: ignore[no-untyped-call]
        return found or DataType.string
    except (TypeError, MlflowException):  # pandas' own dtypes (category, string), or one MLflow has no type for
        return DataType.string


def log_child_runs(client: MlflowClient, run_id: str, entries: list[dict[str, Any]], warn: Warn,
                   call: MlflowCaller = direct, *, experiment_id: str | None = None,
                   dataset_of: Callable[[str], dict[str, Any] | None] = lambda name: None) -> dict[str, str]:
    """Each "child_run" entry as a run of its own under ``run_id`` (MLflow's tag
    ``mlflow.parentRunId``) in ``experiment_id`` (by default the parent's), created,
    filled and ended at once, with the datasets it names as its inputs (``dataset_of``
    gives a name's "dataset" entry). Returns the child run of each model label (entries
    of the model comparison), for its model to name as source."""
    if experiment_id is None:
        experiment_id = call(client.get_run, run_id).info.experiment_id
    by_label = {}
    for entry in entries:
        tags = {**entry.get("tags", {}), "mlflow.parentRunId": run_id}
        child = call(client.create_run, experiment_id, entry.get("start_time"), tags, entry.get("name"))
        child_id = child.info.run_id
        batch = Batch(params=dict(entry.get("params", {})), tags={},
                      metrics=[(key, value, timestamp, step) for key, value, timestamp, step, _ in metrics_of(entry)])
        write_entities(client, child_id, batch, warn, call)
        used = [(found, context) for name, context in entry.get("datasets", []) if (found := dataset_of(name)) is not None]
        if used:
            log_datasets(client, child_id, [{**found, "context": context} for found, context in used], warn, call)
        call(client.set_terminated, child_id, "FINISHED", entry.get("end_time"))
        if entry.get("model_label"):
            by_label[entry["model_label"]] = child_id
    return by_label


def metrics_of(entry: dict[str, Any]) -> list[tuple[str, float, int, int, str | None]]:
    """An entry's metrics as ``(key, value, timestamp, step, dataset name)``; an item
    that is not of that shape (a journal damaged or written by hand) is left out."""
    found = []
    for item in entry.get("metrics", []):
        try:
            key, value, timestamp, step, data = item
            found.append((str(key), float(value), int(timestamp), int(step), None if data is None else str(data)))
        except (TypeError, ValueError):
            continue
    return found
