"""The one writer: every param, metric, tag and artifact of a run goes through here.

On the calling thread a submission costs one append to the run's journal on local disk
(see ``journal.py``) and one to an in-memory queue. A background thread does all the
talking to MLflow:

1. it opens the run — importing MLflow, setting up the store, creating the run — so
   ``PyPads()`` returns without waiting for any of it. If the script imports MLflow
   meanwhile, that import waits until the run exists: the script's own ``mlflow.log_*``
   calls then find it (see ``hold_mlflow_import``);
2. every ``interval`` seconds it drains the queue into as few MLflow calls as possible
   (``log_batch`` within MLflow's limits, one ``log_artifacts`` per drain) and records
   in the journal how far it got;
3. on :meth:`Writer.close` it drains the rest and ends the run.

A store that does not answer never holds the script: ``close`` gives up after
``timeout`` seconds without an answer and leaves the data in the journal, which the
next ``PyPads()`` uploads (:func:`pypads.connection.recover`).
"""

from __future__ import annotations

# Imported now, not by MLflow's import on the writer's thread: it registers a threading
# exit hook, which Python refuses once it shuts down, and a short script can end while
# the writer is still importing MLflow (the run would then stay in the journal).
import concurrent.futures.thread  # noqa: F401
import importlib
import sys
import threading
import time
import warnings
from collections import deque
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any, BinaryIO

from pypads.journal import Batch, Journal
from pypads.patching.importer import PatchingFinder
from pypads.store import RunTarget

DEFAULT_CLOSE_TIMEOUT = 5.0


class WriterWarning(UserWarning):
    """The writer could not store something in MLflow."""


def connection() -> ModuleType:
    """:mod:`pypads.connection`, imported on first use: it imports MLflow, which takes
    a second that the script should not wait for."""
    # MLflow first: while one thread opens the run inside MLflow's import (see
    # hold_mlflow_import), which imports pypads.connection, another thread must wait at
    # MLflow's import, not hold pypads.connection's import lock: that would deadlock.
    importlib.import_module("mlflow")
    return importlib.import_module("pypads.connection")


class AnswerClock:
    """When the MLflow call in progress began: lets a thread that waits for another
    tell a store that does not answer from one that is merely busy."""

    def __init__(self) -> None:
        self._since: float | None = None

    def call(self, function: Callable[..., Any], *args: Any) -> Any:
        self._since = time.monotonic()
        try:
            return function(*args)
        finally:
            self._since = None

    def wait(self, thread: threading.Thread, timeout: float) -> bool:
        """Wait for ``thread`` to end as long as MLflow answers: False once one call
        has waited ``timeout`` seconds (counted from now at the earliest)."""
        waiting_from = time.monotonic()
        while thread.is_alive():
            thread.join(0.05)
            since = self._since
            if since is not None and time.monotonic() - max(since, waiting_from) > timeout:
                return False
        return True


class Writer:
    """Batches everything of one run into MLflow, off the calling thread.

    Args:
        journal: the run's journal on local disk.
        target: the run to open (or join) in MLflow.
        interval: seconds between two drains into MLflow.
        on_open: called with the run id once the run exists (on whichever thread
            opened it), before a script's ``import mlflow`` can return.
        open_run: how to open it: ``target -> (MlflowClient, run id)``; by default
            :func:`pypads.connection.open_run`.

    Nothing is sent before :meth:`start` (or :meth:`open`, to open the run on the
    calling thread).
    """

    def __init__(
        self,
        journal: Journal,
        target: RunTarget,
        interval: float = 1.0,
        on_open: Callable[[str], None] | None = None,
        open_run: Callable[[RunTarget], tuple[Any, str]] | None = None,
    ) -> None:
        self.journal = journal
        self.target = target
        self.interval = interval
        self._open_run = open_run
        self.client: Any = None  # an MlflowClient once the run is open
        self._run_id: str | None = None
        self._on_open = on_open
        self._open_lock = threading.Lock()
        self._opened = threading.Event()
        self._queue: deque[tuple[dict[str, Any], int]] = deque()
        self._drain_lock = threading.Lock()
        self._wake = threading.Event()
        self._stopped = threading.Event()
        self._end_status: str | None = None
        self._warned: set[str] = set()
        self._failed = False
        self._draining: int | None = None  # the thread that holds _drain_lock
        self._clock = AnswerClock()
        self._import_hold: PatchingFinder | None = None
        self._thread = threading.Thread(target=self._loop, name="pypads-writer", daemon=True)

    def start(self) -> None:
        """Start the background thread, which opens the run unless :meth:`open` did."""
        if "mlflow" not in sys.modules and not self._opened.is_set():
            self._import_hold = hold_mlflow_import(self.open)
        self._thread.start()

    # --- the run ----------------------------------------------------------------------
    @property
    def run_id(self) -> str | None:
        """The MLflow run id; waits until the run is open (``None`` if it could not be)."""
        self._opened.wait()
        return self._run_id

    @property
    def is_open(self) -> bool:
        return self._opened.is_set() and self._run_id is not None

    def open(self) -> bool:
        """Open the run now, on the calling thread, unless that has happened already."""
        with self._open_lock:
            if self._opened.is_set():
                return self._run_id is not None
            try:
                self.client, run_id = self._call(self._open_run or connection().open_run, self.target)
                self.journal.set_run_id(run_id)
                self._run_id = run_id
                if self._on_open is not None:
                    self._on_open(run_id)
            except Exception as error:  # the store is unreachable: the journal keeps it all
                self._failed = True
                self._warn("open", f"pypads could not open an MLflow run at {self.target.store.tracking_uri} "
                           f"({error}); tracking goes on into {self.journal.folder}, which the next PyPads() uploads")
            finally:
                self._opened.set()
            return self._run_id is not None

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
        self._enqueue({"kind": "artifact", "path": artifact_path}, self.journal.stage(artifact_path, content))

    def append_bytes(self, artifact_path: str, content: bytes) -> None:
        """Add ``content`` to the end of the artifact ``artifact_path``."""
        self._reopen_if_closed()
        self._enqueue({"kind": "artifact", "path": artifact_path},
                      self.journal.stage(artifact_path, content, append=True))

    def log_file(self, artifact_path: str, write: Callable[[BinaryIO], None]) -> None:
        """Store the artifact ``artifact_path`` as ``write`` writes it into the file it
        is given: for large content, which is then never held in memory as bytes."""
        self._reopen_if_closed()
        self.journal.stage_file(artifact_path, write)
        self._enqueue({"kind": "artifact", "path": artifact_path}, 0)

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

        Waits for the run to be open. Returns False, writing nothing, when the run
        could not be opened, or when called from a signal handler that interrupted this
        very thread in the middle of a drain: waiting for that drain would wait forever.
        """
        if self._draining == threading.get_ident() or not self._open_or_wait():
            return False
        with self._drain_lock:
            self._draining = threading.get_ident()
            try:
                self._write(self._drain())
            finally:
                self._draining = None
        return not self._failed

    def close(self, status: str | None = None, timeout: float = DEFAULT_CLOSE_TIMEOUT) -> bool:
        """Write everything, end the run with ``status`` (if given) and stop.

        Waits as long as the writing takes, but gives up once MLflow has not answered
        one call for ``timeout`` seconds. Returns True when everything is in MLflow and
        the journal is gone; otherwise the journal keeps it (with ``status``) for the
        next ``PyPads()``, and a warning says so.
        """
        if status is not None:
            try:
                self.journal.set_status(status)
            except OSError as error:  # the journal is only the fallback; go on closing
                self._warn("status", f"could not note the run's status in {self.journal.folder}: {error}")
        self._end_status = status
        self._stopped.set()
        self._wake.set()
        if self._thread is threading.current_thread() or self._draining == threading.get_ident():
            return False  # a signal handler interrupted our own drain: the journal keeps it
        if not self._thread.is_alive() and self._thread.ident is None:
            self._thread.start()  # never started: the final drain still happens
        if not self._clock.wait(self._thread, timeout):
            self._warn("close", f"MLflow at {self.target.store.tracking_uri} did not answer for {timeout:g} s: "
                       f"the run's data stays in {self.journal.folder} and the next PyPads() uploads it")
            return False
        if self._import_hold is not None:
            self._import_hold.uninstall()
        return not self._failed

    def _loop(self) -> None:
        if not self._open_or_wait():
            return
        while not self._stopped.is_set():
            self._wake.wait(self.interval)
            self._wake.clear()
            if self._queue:
                self.flush()
        self.flush()
        if self._end_status is not None and self.target.join_run_id is None and not self._failed:
            try:
                self._call(self.client.set_terminated, self._run_id, self._end_status)
            except Exception as error:
                self._failed = True
                self._warn("end", f"could not end MLflow run {self._run_id} (kept in {self.journal.folder}): {error}")
        if not self._failed:
            self.journal.discard()

    def _open_or_wait(self) -> bool:
        if self._thread is threading.current_thread():
            if self._import_hold is not None:
                # Import MLflow here; whichever thread runs its import opens the run in it.
                try:
                    importlib.import_module("mlflow")
                except Exception:  # noqa: S110 - open() below reports it, and run_id stops waiting
                    pass
            return self.open()
        self._opened.wait()
        return self._run_id is not None

    def _drain(self) -> Batch:
        batch = Batch()
        while self._queue:
            entry, offset = self._queue.popleft()
            batch.add(entry, offset)
        return batch

    def _write(self, batch: Batch) -> None:
        link = connection()
        if batch.has_entities:
            try:
                self._call(link.write_entities, self.client, self._run_id, batch, self._warn)
                self.journal.commit(batch.offset)
            except Exception as error:  # the store is unreachable: the journal keeps it
                self._failed = True
                self._warn("batch", f"could not log to MLflow run {self._run_id} (kept in {self.journal.folder}): {error}")
        if batch.artifacts:
            try:
                link.upload_artifacts(self.client, self._run_id, self.journal, sorted(batch.artifacts), self._call)
            except Exception as error:
                self._failed = True
                self._warn("artifacts", f"could not store artifacts of run {self._run_id} (kept in {self.journal.folder}): {error}")

    def _call(self, function: Callable[..., Any], *args: Any) -> Any:
        return self._clock.call(function, *args)

    def _warn(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, WriterWarning, stacklevel=2)


def hold_mlflow_import(open_run: Callable[[], Any]) -> PatchingFinder:
    """Make the first import of MLflow, by any thread, open the run before it returns.

    MLflow keeps the active run per thread, so the run this writer opens on its own
    thread is not the script's active run. The script's ``mlflow.log_*`` calls still
    reach it through ``MLFLOW_RUN_ID`` (set by ``on_open``), but only once the run
    exists: a script that imports MLflow right after ``PyPads()`` would otherwise log
    into a run of its own. Python makes every other thread's import of a module wait
    while one thread executes it, and this hook runs inside that execution.
    """
    finder: PatchingFinder

    def loaded(_module: ModuleType) -> None:
        finder.uninstall()
        open_run()

    finder = PatchingFinder(lambda name: name == "mlflow", loaded)
    finder.install()
    return finder
