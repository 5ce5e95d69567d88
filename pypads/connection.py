"""Everything that talks to MLflow: opening the run, writing batches, uploading
artifacts and ending the run.

Importing MLflow takes about a second and 170 MB, so no module on the script's path
imports this one: the uploader does (see ``uploader.py``), in a process of its own
unless the script has imported MLflow itself.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import mlflow
import mlflow.pyfunc
import numpy as np
from mlflow.data.schema import TensorDatasetSchema
from mlflow.entities import (
    Dataset, DatasetInput, InputTag, LoggedModelOutput, LoggedModelStatus, Metric, Param, RunStatus, RunTag,
)
from mlflow.exceptions import MlflowException
from mlflow.models import Model, ModelSignature
from mlflow.tracking import MlflowClient
from mlflow.tracking.context import registry as context_registry
from mlflow.types.schema import ColSpec, DataType, Schema, TensorSpec

from pypads.journal.reading import Batch, JournalReader
from pypads.store import RunTarget, Store

MAX_PARAMS_PER_BATCH = 100
MAX_TAGS_PER_BATCH = 100
MAX_ENTITIES_PER_BATCH = 1000
UPLOAD_CHUNK = 200  # files per log_artifacts call
PICKLE = "model.pkl"  # a saved model's pickle, as mlflow.sklearn names it
# The experiment tag MLflow 3's UI reads for the view an experiment opens in, and the
# value of its model-training ("Machine learning") view; without it, GenAI's.
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
MODEL_TRAINING_KIND = "custom_model_development"

Warn = Callable[[str, str], None]
Call = Callable[..., Any]


def _direct(function: Callable[..., Any], *args: Any) -> Any:
    return function(*args)


def open_run(target: RunTarget, start_time: int | None = None) -> tuple[MlflowClient, str]:
    """The client and the id of the run to write into: the one to join, or a new run
    in the target's experiment, tagged the way ``mlflow.start_run`` tags it (user,
    source, git commit) so the UI shows where it came from. ``start_time`` (ms) is when
    the script started tracking: the run is opened later, off the script's thread, and
    its "Created at" and "Duration" must not count that delay."""
    client = MlflowClient(target.store.tracking_uri)
    if target.join_run_id is not None:
        return client, target.join_run_id
    experiment_id = ensure_experiment(client, target.store, target.experiment_name)
    run = client.create_run(experiment_id, start_time=start_time, tags=context_registry.resolve_tags())
    return client, run.info.run_id


def open_fluent_run(target: RunTarget) -> tuple[MlflowClient, str]:
    """Like :func:`open_run`, but through ``mlflow.start_run`` on the calling thread,
    so the run is MLflow's active run there, for a script that uses MLflow itself.
    It starts now, not after the second that MLflow's first store access can take."""
    start_time = int(time.time() * 1000)
    client = MlflowClient(target.store.tracking_uri)
    if target.join_run_id is not None:
        return client, target.join_run_id
    experiment_id = ensure_experiment(client, target.store, target.experiment_name)
    run = client.create_run(experiment_id, start_time=start_time, tags=context_registry.resolve_tags())
    return client, mlflow.start_run(run_id=run.info.run_id).info.run_id


def start_fluent_run(run_id: str) -> None:
    """Make ``run_id`` MLflow's active run in the calling thread, so the user's own
    ``mlflow.log_*`` calls there go into it (MLflow keeps one run stack per thread)."""
    mlflow.start_run(run_id=run_id)


def end_fluent_run(run_id: str, status: str) -> bool:
    """End ``run_id`` if it is MLflow's active run in the calling thread."""
    active = mlflow.active_run()
    if active is None or active.info.run_id != run_id:
        return False
    mlflow.end_run(status)
    return True


def ensure_experiment(client: MlflowClient, store: Store, name: str) -> str:
    """The id of experiment ``name``; if new, created with an explicit artifact folder
    and marked as model training, so MLflow's UI opens it in its "Machine learning"
    view rather than the GenAI one (an experiment the user made is left as it is)."""
    experiment = client.get_experiment_by_name(name)
    if experiment is not None:
        return experiment.experiment_id
    location = None
    if store.artifact_root is not None:
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name)
        location = (store.artifact_root / safe).as_uri()
    try:
        return client.create_experiment(name, artifact_location=location,
                                        tags={EXPERIMENT_KIND_TAG: MODEL_TRAINING_KIND})
    except Exception:  # another process created it between our two calls
        experiment = client.get_experiment_by_name(name)
        if experiment is None:
            raise
        return experiment.experiment_id


def write_entities(client: MlflowClient, run_id: str, batch: Batch, warn: Warn, call: Call = _direct) -> None:
    """The batch's params, tags and metrics in ``log_batch`` calls within MLflow's limits
    (each timed through ``call``)."""
    param_list = [Param(key, value) for key, value in batch.params.items()]
    tag_list = [RunTag(key, value) for key, value in batch.tags.items()]
    metric_list = [Metric(key, value, timestamp, step) for key, value, timestamp, step in batch.metrics]
    while param_list or tag_list or metric_list:
        batch_params, param_list = param_list[:MAX_PARAMS_PER_BATCH], param_list[MAX_PARAMS_PER_BATCH:]
        batch_tags, tag_list = tag_list[:MAX_TAGS_PER_BATCH], tag_list[MAX_TAGS_PER_BATCH:]
        room = MAX_ENTITIES_PER_BATCH - len(batch_params) - len(batch_tags)
        batch_metrics, metric_list = metric_list[:room], metric_list[room:]
        _log_batch(client, run_id, batch_metrics, batch_params, batch_tags, warn, call)


def _log_batch(client: MlflowClient, run_id: str, metrics: list[Metric], params: list[Param], tags: list[RunTag],
               warn: Warn, call: Call) -> None:
    """One ``log_batch`` call. An entity MLflow refuses (a changed param, a name it does
    not allow) must not sink the rest: the batch is halved until each refused entity
    stands alone, and is then dropped with a warning. Any other error (the store, not
    the data) is raised: the journal keeps the batch."""
    try:
        call(lambda: client.log_batch(run_id, metrics=metrics, params=params, tags=tags))
    except MlflowException as error:
        if error.error_code != "INVALID_PARAMETER_VALUE":
            raise
        entities: list[Metric | Param | RunTag] = [*metrics, *params, *tags]
        if len(entities) == 1:
            kind = {Metric: "metric", Param: "param", RunTag: "tag"}[type(entities[0])]
            warn(f"{kind}:{entities[0].key}", f"MLflow refused {kind} {entities[0].key!r}: {error.message}")
            return
        for part in (entities[: len(entities) // 2], entities[len(entities) // 2 :]):
            _log_batch(client, run_id, [entity for entity in part if isinstance(entity, Metric)],
                       [entity for entity in part if isinstance(entity, Param)],
                       [entity for entity in part if isinstance(entity, RunTag)], warn, call)


def upload_artifacts(
    client: MlflowClient, run_id: str, journal: JournalReader, paths: Iterable[str], call: Call = _direct
) -> None:
    """Upload the journal's artifacts at ``paths``, ``UPLOAD_CHUNK`` files per
    ``log_artifacts`` call (each timed through ``call``, so thousands of files read as
    progress, not as a store that does not answer); drop the ones that had files of
    their own from the journal."""
    pending = list(paths)
    while pending:
        chunk, pending = pending[:UPLOAD_CHUNK], pending[UPLOAD_CHUNK:]
        # In the journal, so that large files are hard-linked, not copied (/tmp is often
        # another file system); mkdtemp, not TemporaryDirectory: its clean-up at
        # interpreter exit would race an uploader thread that is still uploading.
        folder = Path(tempfile.mkdtemp(prefix=".upload-", dir=journal.folder))
        try:
            uploaded = [path for path in chunk if _materialize(journal, path, folder)]
            if uploaded:
                call(client.log_artifacts, run_id, str(folder))
            for path in uploaded:
                journal.unstage(path, folder / path)
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def _materialize(journal: JournalReader, path: str, folder: Path) -> bool:
    target = folder / path
    target.parent.mkdir(parents=True, exist_ok=True)
    return journal.materialize(path, target)


def end_run(client: MlflowClient, run_id: str, status: str, only_if_running: bool = False) -> None:
    """End ``run_id`` with ``status`` (``only_if_running``: unless it has ended already)."""
    if only_if_running and client.get_run(run_id).info.status != RunStatus.to_string(RunStatus.RUNNING):
        return
    client.set_terminated(run_id, status)


# --- datasets, child runs and models (journal entries of those kinds) ------------------
def log_datasets(client: MlflowClient, run_id: str, entries: list[dict[str, Any]], call: Call = _direct) -> None:
    """The "dataset" entries as the run's dataset inputs, with the context (``training``,
    ``evaluation``) as MLflow's ``mlflow.data.context`` tag."""
    source = json.dumps({"tags": {"mlflow.source.name": sys.argv[0] if sys.argv else ""}})
    inputs = [DatasetInput(Dataset(entry["name"], entry["digest"], "code", source, _dataset_schema(entry),
                                   json.dumps(entry.get("profile", {}))),
                           tags=[InputTag("mlflow.data.context", entry["context"])]) for entry in entries]
    call(client.log_inputs, run_id, inputs)


def _dataset_schema(entry: dict[str, Any]) -> str | None:
    features, targets = _schema(entry.get("features")), _schema(entry.get("targets"))
    if features is None:
        return None
    if entry["features"]["kind"] == "frame":  # what MLflow's pandas datasets write
        return json.dumps({"mlflow_colspec": features.to_dict()})
    return json.dumps(TensorDatasetSchema(features=features, targets=targets).to_dict())


def _schema(described: dict[str, Any] | None) -> Schema | None:
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
                   call: Call = _direct) -> dict[str, str]:
    """Each "child_run" entry as a run of its own under ``run_id`` (MLflow's tag
    ``mlflow.parentRunId``), created, filled and ended at once. Returns the child run of
    each model label (entries of the model comparison), for its model to name as source."""
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


def log_model(client: MlflowClient, run_id: str, entry: dict[str, Any], pickled: bytes, call: Call = _direct,
              child_run_id: str | None = None) -> str:
    """Save the estimator the script pickled as an MLflow model of the sklearn flavour
    (pyfunc-loadable if it predicts, with the signature the logger described), listed
    among the run's logged models (and those of its child run ``child_run_id``, then
    its source run, when the run compares models); returns its model id.

    The model folder is written from the pickle as it is, with MLflow's ``Model`` API
    (what ``mlflow.sklearn.save_model`` writes): saving through scikit-learn would
    unpickle the estimator here, and importing scikit-learn into the uploader takes
    seconds. Requirements are the installed versions, named explicitly: MLflow's
    inference runs the model in a subprocess, seconds per model."""
    experiment_id = call(client.get_run, run_id).info.experiment_id
    source = child_run_id or run_id
    model = call(lambda: client.create_logged_model(experiment_id, name=entry["name"], source_run_id=source,
                                                    tags=entry.get("tags")))
    folder = Path(tempfile.mkdtemp(prefix="pypads-model-"))
    try:
        _write_model_folder(folder, entry, pickled, Model(artifact_path=model.artifact_location, model_uuid=model.model_id,
                                                          run_id=source, model_id=model.model_id))
        call(client.log_model_artifacts, model.model_id, str(folder))
    except Exception:
        # Marked FAILED rather than left PENDING: the UI would list it as a model to load.
        call(client.finalize_logged_model, model.model_id, LoggedModelStatus.FAILED)
        raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    for owner in dict.fromkeys((run_id, source)):
        call(client.log_outputs, owner, [LoggedModelOutput(model.model_id, step=0)])
    call(client.finalize_logged_model, model.model_id, LoggedModelStatus.READY)
    return model.model_id


def _write_model_folder(folder: Path, entry: dict[str, Any], pickled: bytes, model: Model) -> None:
    (folder / PICKLE).write_bytes(pickled)
    requirements = _requirements(entry.get("module", ""))
    (folder / "requirements.txt").write_text("\n".join(requirements))
    python = ".".join(map(str, sys.version_info[:3]))
    # JSON is YAML: the two environment files MLflow writes beside a model, for serving it.
    (folder / "python_env.yaml").write_text(json.dumps({"python": python, "build_dependencies": ["pip", "setuptools", "wheel"],
                                                         "dependencies": ["-r requirements.txt"]}, indent=2))
    (folder / "conda.yaml").write_text(json.dumps({"name": "mlflow-env", "channels": ["conda-forge"], "dependencies": [
        f"python={python}", "pip", {"pip": requirements}]}, indent=2))
    inputs = _schema(entry.get("input"))
    if inputs is not None:  # data of a kind with no schema (a list, a generator): no signature
        model.signature = ModelSignature(inputs, _schema(entry.get("output")))
    if entry.get("predicts", True):  # pyfunc's predict calls the estimator's
        mlflow.pyfunc.add_to_model(model, loader_module="mlflow.sklearn", model_path=PICKLE, conda_env="conda.yaml",
                                   python_env="python_env.yaml", predict_fn="predict")
    model.add_flavor("sklearn", pickled_model=PICKLE, sklearn_version=_version("scikit-learn"),
                     serialization_format="cloudpickle", code=None)
    model.model_size_bytes = sum(path.stat().st_size for path in folder.iterdir())
    model.save(str(folder / "MLmodel"))


def _requirements(module: str) -> list[str]:
    """Exact versions of what loading the model needs: MLflow, scikit-learn, cloudpickle,
    numpy, scipy, and the estimator's own package if it is another (a distribution named
    like it: ``lightgbm``, ``xgboost``)."""
    names = ["mlflow", "scikit-learn", "cloudpickle", "numpy", "scipy", module.split(".")[0]]
    return [f"{name}=={version}" for name in dict.fromkeys(names) if name and (version := _version(name))]


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except (importlib.metadata.PackageNotFoundError, ValueError):  # mlflow-skinny for mlflow, a package of a script
        return None
