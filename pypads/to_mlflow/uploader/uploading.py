"""The uploader itself: reads a run's journal as it grows and sends it to MLflow.

An :class:`Uploader` opens (or joins) the run, sends what the journal holds in as few
MLflow calls as possible, records in the journal how far it got, and at the end ends
the run and deletes the journal. It shares nothing with the script but the journal's
files, so it runs on a thread of the script or in a process of its own alike.
"""

from __future__ import annotations

import errno
import functools
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pypads.to_mlflow.access import mlflow_connection
from pypads.to_mlflow.journal.format import run_target
from pypads.to_mlflow.journal.reading import JournalReader
from pypads.to_mlflow.store import RunTarget
from pypads.to_mlflow.timeouts import AnswerClock
from pypads.to_mlflow.uploader.pages import ModelPages, StoreFailed
from pypads.to_mlflow.uploader.reports import OncePerKey, Warn, warn_locally

if TYPE_CHECKING:  # MLflow is imported when the run is opened, not before
    from mlflow.tracking import MlflowClient

OpenRun = Callable[[RunTarget], "tuple[MlflowClient, str]"]
"""Opens a run: ``target -> (MlflowClient, run id)``."""


class Uploader:
    """Uploads the journal in ``folder`` into its MLflow run.

    Args:
        folder: the journal.
        clock: times every MLflow call (see :class:`AnswerClock`).
        warn: reports a failure, once per ``key``.
        open_run: ``target -> (MlflowClient, run id)``; by default
            :func:`pypads.to_mlflow.connection.open_run`.
        on_open: called with the run id once the run exists.
        pictures: whether to draw the models' pictures (not on a thread of the script:
            matplotlib must not load into its process).

    After a failure nothing more is sent: the journal keeps all that is not committed,
    in order, for a later :func:`recover`.
    """

    def __init__(
        self,
        folder: Path,
        clock: AnswerClock | None = None,
        warn: Warn = warn_locally,
        open_run: OpenRun | None = None,
        on_open: Callable[[str], None] | None = None,
        pictures: bool = True,
    ) -> None:
        self.journal = JournalReader(folder)
        meta = self.journal.meta()
        self.owns_run: bool = meta.get("owns_run", True)
        self.target = run_target(meta)
        self.start_time: int | None = meta.get("start_time")  # ms; when PyPads() made the journal
        self.clock = clock or AnswerClock()
        self.client: MlflowClient | None = None  # once the run is open
        self.run_id: str | None = None
        self.failed = False
        self.failure: Exception | None = None  # what made the upload stop
        self.opened = threading.Event()
        self._warn_once = OncePerKey(warn)
        self._open_run = open_run
        self._on_open = on_open
        self._open_lock = threading.Lock()
        self._drain_lock = threading.Lock()
        self._draining: int | None = None  # the thread that holds _drain_lock
        self._since = self.journal.committed()
        self._first_drain = True
        # The run's experiment, for child runs and models: read once, and before a batch's
        # params when the batch has child runs (MLflow's get_run loads every param).
        self._experiment_id: str | None = None
        self._pages = ModelPages(self.journal, self.clock, self._warn_once, pictures)

    def open(self) -> bool:
        """Open the run (or join the one the journal names), unless that happened already."""
        # Outside the lock: the first import of MLflow may run hold_mlflow_import's hook,
        # which opens the run on this very thread.
        try:
            open_run = self._open_run or functools.partial(mlflow_connection.open_run, start_time=self.start_time)
        except Exception as error:  # MLflow cannot even be imported
            open_run = _raise(error)
        with self._open_lock:
            if self.opened.is_set():
                return self.run_id is not None
            try:
                self.client, run_id = self.clock.call(open_run, self.target)
                self._note_run_id(run_id)
                self.run_id = run_id
                if self._on_open is not None:
                    self._on_open(run_id)
            except Exception as error:  # the store is unreachable: the journal keeps it all
                self.failed, self.failure = True, error
                self._warn_once("open", f"pypads could not open an MLflow run at {self.target.store.display_uri} "
                                f"({error}); tracking goes on into {self.journal.folder}, which the next PyPads() uploads")
            finally:
                self.opened.set()
            return self.run_id is not None

    def _note_run_id(self, run_id: str) -> None:
        """Write the run's id into the journal, for a recovery should this process die."""
        if run_id == self.target.join_run_id:
            return
        try:
            self.journal.set_run_id(run_id)
        except OSError as error:  # a full disk: the run is open all the same, and this process ends it
            self._warn_once("run id", f"could not note run {run_id} in {self.journal.folder}: {error}")

    def drain(self) -> bool:
        """Send what the journal holds now; True when all of it is in MLflow.

        Returns False at once when called from a signal handler that interrupted this
        very thread in the middle of a drain: waiting for that drain would wait forever.
        """
        if self.draining_here or not self.open() or self.failed:
            return False
        with self._drain_lock:
            self._draining = threading.get_ident()
            try:
                self._send()
            finally:
                self._draining = None
        return not self.failed

    @property
    def draining_here(self) -> bool:
        """Whether this thread is in the middle of a drain (a signal handler interrupted it)."""
        return self._draining == threading.get_ident()

    def finish(self, status: str | None, only_if_running: bool = False) -> bool:
        """:meth:`end` the run, then :meth:`send_pictures`: all of it, for an uploader
        that nobody waits for (a recovery) or that draws no pictures (a thread)."""
        return self.end(status, only_if_running) and self.send_pictures()

    def end(self, status: str | None, only_if_running: bool = False) -> bool:
        """Send the rest but the pictures, and end the run with ``status`` if the
        journal's script owns it (``only_if_running``: unless it has ended already).
        Returns False, keeping the journal, if anything did not reach MLflow.

        On a full disk the run is ended all the same, with what reached MLflow: left
        RUNNING, it would wait for a recovery that the same full disk may never allow.
        The journal keeps the rest, which a later recovery adds to the ended run."""
        if self.journal.ended():  # an uploader died drawing the pictures: the rest is in MLflow
            return True
        drained = self.drain() and self._send_pages()
        if not drained and not (self.disk_full and self.run_id is not None):
            return False
        if status is not None and self.owns_run:
            try:
                self.clock.call(mlflow_connection.end_run, self._open_client, self.run_id, status, only_if_running,
                                self.target.mpi is not None)
            except Exception as error:
                self.failed = True
                self._warn_once("end", f"could not end MLflow run {self.run_id} (kept in {self.journal.folder}): {error}")
                return False
        if not drained:
            return False
        try:
            self.journal.mark_ended()
        except OSError:  # noqa: S110 - a full disk: only a death while drawing could still resend
            pass
        return True

    def send_pictures(self, between: Callable[[], object] = lambda: None) -> bool:
        """Draw the models' pictures into the ended run, then delete the journal. The
        script does not wait for this (the run is whole without them), so what fails is
        a tag on the run, ``pypads.failure.pictures``: nobody is left to read a warning.
        ``between`` is called between two models' (or datasets') pictures, and may wait."""
        if self.run_id is not None:
            failures = self._pages.upload_pictures(self._open_client, self.run_id, between)
            if failures:
                try:
                    self.clock.call(self._open_client.set_tag, self.run_id, "pypads.failure.pictures",
                                    "; ".join(failures)[:5000])
                except Exception:  # noqa: S110 - the store is gone: the run has all but its pictures
                    pass
        self.journal.discard()
        return True

    @property
    def disk_full(self) -> bool:
        """Whether an upload failed for want of disk space (the journal's, or the store's)."""
        return isinstance(self.failure, OSError) and self.failure.errno in (errno.ENOSPC, errno.EDQUOT)

    def _send(self) -> None:
        run_id = self._open_run_id  # drain opened it
        batch = self.journal.read_new(self._since)
        where = f"MLflow run {run_id} (kept in {self.journal.folder})"
        try:
            if batch.child_runs:
                self._experiment()
            if batch.has_entities:
                mlflow_connection.write_entities(self._open_client, run_id, batch, self._warn_once, self.clock.call)
        except Exception as error:
            self.failed, self.failure = True, error
            self._warn_once("batch", f"could not log to {where}: {error}")
            return
        try:
            if batch.datasets:
                mlflow_connection.log_datasets(self._open_client, run_id, batch.datasets, self._warn_once, self.clock.call)
            if batch.evaluations:  # before child runs: their metrics include the training scores
                self._pages.evaluate(self._open_client, self._open_run_id, batch.evaluations)
            if batch.charts:
                self._pages.add_charts(batch.charts)
            if batch.child_runs:
                self._pages.child_runs.update(mlflow_connection.log_child_runs(self._open_client, run_id,
                                                                  self._pages.with_scores(batch.child_runs),
                                                                  self._warn_once, self.clock.call,
                                                                  experiment_id=self._experiment(),
                                                                  dataset_of=self.journal.dataset))
        except Exception as error:
            self.failed, self.failure = True, error
            self._warn_once("inputs", f"could not log datasets or child runs to {where}: {error}")
            return
        paths = set(batch.artifacts)
        if self._first_drain:  # files a journal of an older pypads staged without a line
            paths.update(self.journal.staged_files())
            self._first_drain = False
        try:
            if paths:
                mlflow_connection.upload_artifacts(self._open_client, run_id, self.journal, sorted(paths), self.clock.call)
        except Exception as error:
            self.failed, self.failure = True, error
            if self.disk_full:
                self.journal.release_reserve()  # room to note the run's end
            self._warn_once("artifacts", f"could not store artifacts of {where}: {error}")
            return
        self._since = batch.offset
        try:
            self.journal.commit(batch.offset)
        except OSError as error:  # a full disk: this process knows how far it got, a recovery would resend
            self._warn_once("commit", f"could not note the upload's progress in {self.journal.folder}: {error}")

    @property
    def _open_client(self) -> MlflowClient:
        """MLflow's client, once :meth:`open` succeeded."""
        if self.client is None:
            raise RuntimeError("no MLflow run is open")
        return self.client

    @property
    def _open_run_id(self) -> str:
        """The run's id, once :meth:`open` succeeded: the only time anything is sent."""
        if self.run_id is None:
            raise RuntimeError("no MLflow run is open")
        return self.run_id

    def _experiment(self) -> str:
        if self._experiment_id is None:
            self._experiment_id = self.clock.call(self._open_client.get_run, self._open_run_id).info.experiment_id
        return self._experiment_id

    def _send_pages(self) -> bool:
        """The models' pages (see :class:`ModelPages`); False, keeping the journal, if the store failed."""
        try:
            self._pages.save_models(self._open_client, self._open_run_id, self._experiment())
            self._pages.plan_pictures()
        except StoreFailed as failed:
            self.failed, self.failure = True, failed.error
            self._warn_once(failed.key, str(failed))
            return False
        return True


def _raise(error: Exception) -> OpenRun:
    def raising(_target: RunTarget) -> tuple[Any, str]:
        raise error
    return raising

