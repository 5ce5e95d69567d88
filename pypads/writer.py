"""The one writer: every param, metric, tag and artifact of a run goes through here.

Loggers only append to an in-memory queue (cheap, on the calling thread). A
background thread drains the queue every ``interval`` seconds into as few MLflow
calls as possible: ``log_batch`` within MLflow's limits (100 params, 100 tags,
1,000 metrics, 1,000 entities in all per call) and one ``log_artifacts`` per drain.
``flush()`` drains on the calling thread and returns once everything submitted
before it is in MLflow.
"""

from __future__ import annotations

import tempfile
import threading
import time
import warnings
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mlflow.entities import Metric, Param, RunTag
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

MAX_PARAMS_PER_BATCH = 100
MAX_TAGS_PER_BATCH = 100
MAX_ENTITIES_PER_BATCH = 1000
MAX_TAG_LENGTH = 8000


@dataclass
class _Artifact:
    path: str
    content: bytes


@dataclass
class _Drained:
    params: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    metrics: list[Metric] = field(default_factory=list)
    artifacts: list[_Artifact] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.params or self.tags or self.metrics or self.artifacts)


class WriterWarning(UserWarning):
    """The writer could not store something in MLflow."""


class Writer:
    """Batches everything of one run into MLflow, off the calling thread."""

    def __init__(self, client: MlflowClient, run_id: str, interval: float = 1.0) -> None:
        self.client = client
        self.run_id = run_id
        self.interval = interval
        self._queue: deque[tuple[str, object]] = deque()
        self._drain_lock = threading.Lock()
        self._wake = threading.Event()
        self._stopped = threading.Event()
        self._warned: set[str] = set()
        self._draining: int | None = None  # the thread that holds _drain_lock
        self._thread = threading.Thread(target=self._loop, name="pypads-writer", daemon=True)
        self._thread.start()

    # --- what loggers call (cheap: an append) ---------------------------------------
    def log_params(self, params: Mapping[str, str]) -> None:
        self._put("params", dict(params))

    def log_metric(self, key: str, value: float, step: int = 0) -> None:
        self._put("metric", Metric(key, value, int(time.time() * 1000), step))

    def log_metrics(self, metrics: Mapping[str, float], step: int = 0) -> None:
        timestamp = int(time.time() * 1000)
        for key, value in metrics.items():
            self._put("metric", Metric(key, float(value), timestamp, step))

    def set_tag(self, key: str, value: str) -> None:
        self._put("tags", {key: value})

    def set_tags(self, tags: Mapping[str, str]) -> None:
        self._put("tags", dict(tags))

    def log_bytes(self, artifact_path: str, content: bytes) -> None:
        self._put("artifact", _Artifact(artifact_path, content))

    def log_text(self, artifact_path: str, text: str) -> None:
        self.log_bytes(artifact_path, text.encode("utf-8"))

    def _put(self, kind: str, item: object) -> None:
        self._queue.append((kind, item))
        if self._stopped.is_set():
            # A call that outlived its run (another thread was still inside it at
            # end_run): nobody drains any more, so write at once.
            self.flush()

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
        """Flush and stop the background thread; False if the flush could not run."""
        self._stopped.set()
        self._wake.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()
        return self.flush()

    def _loop(self) -> None:
        while not self._stopped.is_set():
            self._wake.wait(self.interval)
            self._wake.clear()
            if self._queue:
                self.flush()

    def _drain(self) -> _Drained:
        drained = _Drained()
        while self._queue:
            kind, item = self._queue.popleft()
            if kind == "params":
                for key, value in item.items():  # type: ignore[attr-defined]
                    drained.params.setdefault(key, value)
            elif kind == "tags":
                drained.tags.update({k: str(v)[:MAX_TAG_LENGTH] for k, v in item.items()})  # type: ignore[attr-defined]
            elif kind == "metric":
                drained.metrics.append(item)  # type: ignore[arg-type]
            else:
                drained.artifacts.append(item)  # type: ignore[arg-type]
        return drained

    def _write(self, drained: _Drained) -> None:
        if not drained:
            return
        try:
            self._write_entities(drained)
        except Exception as error:  # the store is unreachable or refused the batch
            self._warn("batch", f"could not log to MLflow run {self.run_id}: {error}")
        if drained.artifacts:
            try:
                self._write_artifacts(drained.artifacts)
            except Exception as error:
                self._warn("artifacts", f"could not store artifacts of run {self.run_id}: {error}")

    def _write_entities(self, drained: _Drained) -> None:
        params = [Param(key, value) for key, value in drained.params.items()]
        tags = [RunTag(key, value) for key, value in drained.tags.items()]
        metrics = drained.metrics
        while params or tags or metrics:
            batch_params, params = params[:MAX_PARAMS_PER_BATCH], params[MAX_PARAMS_PER_BATCH:]
            batch_tags, tags = tags[:MAX_TAGS_PER_BATCH], tags[MAX_TAGS_PER_BATCH:]
            room = MAX_ENTITIES_PER_BATCH - len(batch_params) - len(batch_tags)
            batch_metrics, metrics = metrics[:room], metrics[room:]
            try:
                self.client.log_batch(self.run_id, metrics=batch_metrics, params=batch_params, tags=batch_tags)
            except MlflowException:
                # One param MLflow refuses (e.g. a changed value) must not sink the batch.
                self.client.log_batch(self.run_id, metrics=batch_metrics, tags=batch_tags)
                for param in batch_params:
                    try:
                        self.client.log_batch(self.run_id, params=[param])
                    except MlflowException as error:
                        self._warn(f"param:{param.key}", f"MLflow refused param {param.key!r}: {error}")

    def _write_artifacts(self, artifacts: list[_Artifact]) -> None:
        with tempfile.TemporaryDirectory(prefix="pypads-artifacts-") as staging:
            root = Path(staging)
            for artifact in artifacts:
                target = root / artifact.path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(artifact.content)
            self.client.log_artifacts(self.run_id, staging)

    def _warn(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, WriterWarning, stacklevel=2)
