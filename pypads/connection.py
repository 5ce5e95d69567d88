"""Everything that talks to MLflow: opening the run, writing batches, uploading
artifacts and ending the run.

Importing MLflow takes about a second and 170 MB, so no module on the script's path
imports this one: the uploader does (see ``uploader.py``), in a process of its own
unless the script has imported MLflow itself.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import mlflow
from mlflow.entities import Metric, Param, RunStatus, RunTag
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient
from mlflow.tracking.context import registry as context_registry

from pypads.journal import Batch, Journal
from pypads.store import RunTarget, Store

MAX_PARAMS_PER_BATCH = 100
MAX_TAGS_PER_BATCH = 100
MAX_ENTITIES_PER_BATCH = 1000
UPLOAD_CHUNK = 200  # files per log_artifacts call

Warn = Callable[[str, str], None]
Call = Callable[..., Any]


def _direct(function: Callable[..., Any], *args: Any) -> Any:
    return function(*args)


def open_run(target: RunTarget) -> tuple[MlflowClient, str]:
    """The client and the id of the run to write into: the one to join, or a new run
    in the target's experiment, tagged the way ``mlflow.start_run`` tags it (user,
    source, git commit) so the UI shows where it came from."""
    client = MlflowClient(target.store.tracking_uri)
    if target.join_run_id is not None:
        return client, target.join_run_id
    experiment_id = ensure_experiment(client, target.store, target.experiment_name)
    run = client.create_run(experiment_id, tags=context_registry.resolve_tags())
    return client, run.info.run_id


def open_fluent_run(target: RunTarget) -> tuple[MlflowClient, str]:
    """Like :func:`open_run`, but through ``mlflow.start_run`` on the calling thread,
    so the run is MLflow's active run there, for a script that uses MLflow itself."""
    client = MlflowClient(target.store.tracking_uri)
    if target.join_run_id is not None:
        return client, target.join_run_id
    experiment_id = ensure_experiment(client, target.store, target.experiment_name)
    return client, mlflow.start_run(experiment_id=experiment_id).info.run_id


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
    """The id of experiment ``name``, created with an explicit artifact folder if new."""
    experiment = client.get_experiment_by_name(name)
    if experiment is not None:
        return experiment.experiment_id
    location = None
    if store.artifact_root is not None:
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name)
        location = (store.artifact_root / safe).as_uri()
    try:
        return client.create_experiment(name, artifact_location=location)
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
    client: MlflowClient, run_id: str, journal: Journal, paths: Iterable[str], call: Call = _direct
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


def _materialize(journal: Journal, path: str, folder: Path) -> bool:
    target = folder / path
    target.parent.mkdir(parents=True, exist_ok=True)
    return journal.materialize(path, target)


def end_run(client: MlflowClient, run_id: str, status: str, only_if_running: bool = False) -> None:
    """End ``run_id`` with ``status`` (``only_if_running``: unless it has ended already)."""
    if only_if_running and client.get_run(run_id).info.status != RunStatus.to_string(RunStatus.RUNNING):
        return
    client.set_terminated(run_id, status)
