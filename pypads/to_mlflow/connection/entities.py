"""A journal's params, metrics, tags and artifacts, in as few MLflow calls as its limits allow."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mlflow.entities import Metric, Param, RunTag
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from pypads.to_mlflow.journal.reading import Batch, JournalReader

MAX_PARAMS_PER_BATCH = 100
MAX_TAGS_PER_BATCH = 100
MAX_ENTITIES_PER_BATCH = 1000
UPLOAD_CHUNK = 200  # files per log_artifacts call

Warn = Callable[[str, str], None]
# How an MLflow call is made: directly, or through the clock that times unanswered calls.
MlflowCaller = Callable[..., Any]


def direct(function: Callable[..., Any], *args: Any) -> Any:
    return function(*args)


def write_entities(client: MlflowClient, run_id: str, batch: Batch, warn: Warn, call: MlflowCaller = direct) -> None:
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
               warn: Warn, call: MlflowCaller) -> None:
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
    client: MlflowClient, run_id: str, journal: JournalReader, paths: Iterable[str], call: MlflowCaller = direct
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
