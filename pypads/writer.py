"""The one writer: every param, metric, tag and artifact of a run goes through here.

On the calling thread a submission costs one append to the run's journal on local disk
(see ``journal.py``) and one to an in-memory queue. A background thread drains the queue
every ``interval`` seconds into as few MLflow calls as possible: ``log_batch`` within
MLflow's limits (100 params, 100 tags, 1,000 metrics, 1,000 entities in all per call) and
one ``log_artifacts`` per drain, then records in the journal how far it got.
``flush()`` drains on the calling thread and returns once everything submitted before it
is in MLflow. What could not be written stays in the journal for :func:`recover`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
import warnings
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlflow.entities import Metric, Param, RunStatus, RunTag
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from pypads.journal import Journal, left_behind

MAX_PARAMS_PER_BATCH = 100
MAX_TAGS_PER_BATCH = 100
MAX_ENTITIES_PER_BATCH = 1000
MAX_TAG_LENGTH = 8000


class WriterWarning(UserWarning):
    """The writer could not store something in MLflow."""


@dataclass
class _Batch:
    params: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    metrics: list[Metric] = field(default_factory=list)
    artifacts: dict[str, bool] = field(default_factory=dict)  # path -> appendable
    offset: int = 0  # the journal length these entities reach

    def add(self, entry: Mapping[str, Any]) -> None:
        kind = entry["kind"]
        if kind == "params":
            for key, value in entry["items"].items():
                self.params.setdefault(key, value)
        elif kind == "tags":
            self.tags.update({key: str(value)[:MAX_TAG_LENGTH] for key, value in entry["items"].items()})
        elif kind == "metric":
            self.metrics.append(Metric(entry["key"], entry["value"], entry["timestamp"], entry["step"]))

    @property
    def has_entities(self) -> bool:
        return bool(self.params or self.tags or self.metrics)


class Writer:
    """Batches everything of one run into MLflow, off the calling thread."""

    def __init__(self, client: MlflowClient, run_id: str, journal: Journal, interval: float = 1.0) -> None:
        self.client = client
        self.run_id = run_id
        self.journal = journal
        self.interval = interval
        self._queue: deque[tuple[dict[str, Any], int]] = deque()
        self._drain_lock = threading.Lock()
        self._wake = threading.Event()
        self._stopped = threading.Event()
        self._warned: set[str] = set()
        self._failed = False
        self._draining: int | None = None  # the thread that holds _drain_lock
        self._thread = threading.Thread(target=self._loop, name="pypads-writer", daemon=True)
        self._thread.start()

    # --- what loggers call (cheap: two appends) ---------------------------------------
    def log_params(self, params: Mapping[str, str]) -> None:
        self._put({"kind": "params", "items": dict(params)})

    def log_metric(self, key: str, value: float, step: int = 0) -> None:
        self._put({"kind": "metric", "key": key, "value": float(value), "timestamp": int(time.time() * 1000), "step": step})

    def log_metrics(self, metrics: Mapping[str, float], step: int = 0) -> None:
        timestamp = int(time.time() * 1000)
        for key, value in metrics.items():
            self._put({"kind": "metric", "key": key, "value": float(value), "timestamp": timestamp, "step": step})

    def set_tag(self, key: str, value: str) -> None:
        self._put({"kind": "tags", "items": {key: str(value)}})

    def set_tags(self, tags: Mapping[str, str]) -> None:
        self._put({"kind": "tags", "items": {key: str(value) for key, value in tags.items()}})

    def log_bytes(self, artifact_path: str, content: bytes) -> None:
        """Store ``content`` as the artifact ``artifact_path`` (replacing an earlier one)."""
        self._reopen_if_closed()
        self.journal.stage(artifact_path, content)
        self._enqueue({"kind": "artifact", "path": artifact_path, "append": False}, 0)

    def append_bytes(self, artifact_path: str, content: bytes) -> None:
        """Add ``content`` to the end of the artifact ``artifact_path``."""
        self._reopen_if_closed()
        self.journal.stage(artifact_path, content, append=True)
        self._enqueue({"kind": "artifact", "path": artifact_path, "append": True}, 0)

    def log_text(self, artifact_path: str, text: str) -> None:
        self.log_bytes(artifact_path, text.encode("utf-8"))

    def _put(self, entry: dict[str, Any]) -> None:
        self._reopen_if_closed()
        self._enqueue(entry, self.journal.record(entry))

    def _reopen_if_closed(self) -> None:
        if self._stopped.is_set():
            self.journal.reopen()

    def _enqueue(self, entry: dict[str, Any], offset: int) -> None:
        self._queue.append((entry, offset))
        if self._stopped.is_set():
            # A call that outlived its run (another thread was still inside it at
            # end_run): nobody drains any more, so write at once.
            if self.flush() and not self._failed:
                self.journal.discard()

    # --- getting it into MLflow -----------------------------------------------------
    def flush(self) -> bool:
        """Write everything submitted so far; when this returns True it is visible in MLflow.

        Returns False, writing nothing, when called from a signal handler that
        interrupted this very thread in the middle of a drain: waiting for the drain to
        finish would wait forever.
        """
        if self._draining == threading.get_ident():
            return False
        with self._drain_lock:
            self._draining = threading.get_ident()
            try:
                self._write(self._drain())
            finally:
                self._draining = None
        return True

    def close(self) -> bool:
        """Flush and stop the background thread; the journal is removed when everything
        reached MLflow, and kept for :func:`recover` otherwise."""
        self._stopped.set()
        self._wake.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()
        flushed = self.flush()
        if flushed and not self._failed:
            self.journal.discard()
        return flushed

    def _loop(self) -> None:
        while not self._stopped.is_set():
            self._wake.wait(self.interval)
            self._wake.clear()
            if self._queue:
                self.flush()

    def _drain(self) -> _Batch:
        batch = _Batch()
        while self._queue:
            entry, offset = self._queue.popleft()
            if entry["kind"] == "artifact":
                batch.artifacts[entry["path"]] = batch.artifacts.get(entry["path"], False) or entry["append"]
            else:
                batch.add(entry)
                batch.offset = max(batch.offset, offset)
        return batch

    def _write(self, batch: _Batch) -> None:
        if batch.has_entities:
            try:
                write_entities(self.client, self.run_id, batch, self._warn)
                self.journal.commit(batch.offset)
            except Exception as error:  # the store is unreachable: the journal keeps it
                self._failed = True
                self._warn("batch", f"could not log to MLflow run {self.run_id} (kept in {self.journal.folder}): {error}")
        if batch.artifacts:
            try:
                upload_staged(self.client, self.run_id, self.journal, batch.artifacts)
            except Exception as error:
                self._failed = True
                self._warn("artifacts", f"could not store artifacts of run {self.run_id} (kept in {self.journal.folder}): {error}")

    def _warn(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, WriterWarning, stacklevel=2)


def write_entities(client: MlflowClient, run_id: str, batch: _Batch, warn: Any) -> None:
    params = [Param(key, value) for key, value in batch.params.items()]
    tags = [RunTag(key, value) for key, value in batch.tags.items()]
    metrics = batch.metrics
    while params or tags or metrics:
        batch_params, params = params[:MAX_PARAMS_PER_BATCH], params[MAX_PARAMS_PER_BATCH:]
        batch_tags, tags = tags[:MAX_TAGS_PER_BATCH], tags[MAX_TAGS_PER_BATCH:]
        room = MAX_ENTITIES_PER_BATCH - len(batch_params) - len(batch_tags)
        batch_metrics, metrics = metrics[:room], metrics[room:]
        try:
            client.log_batch(run_id, metrics=batch_metrics, params=batch_params, tags=batch_tags)
        except MlflowException:
            # One param MLflow refuses (e.g. a changed value) must not sink the batch.
            client.log_batch(run_id, metrics=batch_metrics, tags=batch_tags)
            for param in batch_params:
                try:
                    client.log_batch(run_id, params=[param])
                except MlflowException as error:
                    warn(f"param:{param.key}", f"MLflow refused param {param.key!r}: {error}")


def upload_staged(client: MlflowClient, run_id: str, journal: Journal, paths: Mapping[str, bool]) -> None:
    """Upload staged artifacts in one ``log_artifacts`` call; drop the ones that are done."""
    with tempfile.TemporaryDirectory(prefix="pypads-upload-") as folder:
        root = Path(folder)
        for path, appendable in paths.items():
            source = journal.artifacts / path
            if source.exists():
                target = root / path
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    if appendable:
                        raise OSError("a file that still grows is copied, not linked")
                    os.link(source, target)
                except OSError:
                    shutil.copyfile(source, target)
        client.log_artifacts(run_id, folder)
    for path, appendable in paths.items():
        if not appendable:
            journal.unstage(path)


def recover(journals: Iterable[Journal] | None = None) -> list[str]:
    """Upload what dead processes left in their journals; their runs end KILLED if
    still RUNNING. Returns the run ids recovered."""
    recovered = []
    for journal in left_behind() if journals is None else journals:
        meta = journal.meta()
        client = MlflowClient(meta["tracking_uri"])
        batch = _Batch()
        for entry in journal.entries_after(journal.committed()):
            batch.add(entry)
        warnings_seen: list[str] = []
        write_entities(client, meta["run_id"], batch, lambda key, message: warnings_seen.append(message))
        upload_staged(client, meta["run_id"], journal, dict.fromkeys(journal.staged(), False))
        if client.get_run(meta["run_id"]).info.status == RunStatus.to_string(RunStatus.RUNNING):
            client.set_terminated(meta["run_id"], "KILLED")
        journal.discard()
        recovered.append(meta["run_id"])
    return recovered
