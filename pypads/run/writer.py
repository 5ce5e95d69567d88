"""The one writer: every param, metric, tag and artifact of a run goes through here.

On the calling thread a submission costs one append to the run's journal on local disk
(:mod:`pypads.to_mlflow.journal`). An uploader (:mod:`pypads.to_mlflow.uploader`) opens
the run, uploads the journal as it grows (every ``interval`` s, in few MLflow calls) and,
on :meth:`Writer.close`, sends the rest and ends the run. It runs in a process of its
own, so that MLflow's import, memory and database work stay out of a script that does
not use MLflow; in one that has imported MLflow it is a thread (``in_process``). Either
way the writer drives it through :class:`pypads.to_mlflow.link.base.UploaderLink`.

If the script imports MLflow while the run is being opened, that import waits until the
run exists, where its ``mlflow.log_*`` calls find it (``link.base.hold_mlflow_import``).
A store that does not answer never holds the script: ``close`` gives up after
``timeout`` seconds without an answer and leaves the data in the journal, which the
next ``PyPads()`` uploads (:func:`pypads.to_mlflow.uploader.recovery.recover`).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO

from pypads.core import redact_repr, say_on_stderr
from pypads.to_mlflow import (
    PATIENCE,
    JournalWriter,
    LinkSettings,
    OpenRun,
    Outcome,
    RunTarget,
    Uploader,
    UploaderLink,
    UploaderThread,
    default_timeout,
    start_uploader,
    warn_locally,
)


class Writer:
    """Journals everything of one run; an uploader sends it to MLflow.

    Args:
        target: the run to open (or join) in MLflow.
        interval: seconds between two uploads.
        on_open: called with the run id once the run exists, before a script's
            ``import mlflow`` can return.
        open_run: how to open it (uploader thread only): ``target -> (MlflowClient,
            run id)``; by default ``mlflow_connection.open_run``.
        in_process: upload on a thread of this process instead of a process of its own.
        recover: also upload the journals that earlier processes left behind.
        on_failure: called once if the journal cannot be written (then nothing more is).
        wait_timeout: how long asking for the run id, importing MLflow or flushing may
            wait for one MLflow call (opening the run, say) that does not answer; by
            default :func:`~pypads.to_mlflow.timeouts.default_timeout` of the store.

    The writer owns its journal and its uploader, and :meth:`start` makes both: until
    then it only holds what it was given. Nothing is sent before :meth:`start`.
    """

    def __init__(
        self,
        target: RunTarget,
        interval: float = 1.0,
        on_open: Callable[[str], None] | None = None,
        open_run: OpenRun | None = None,
        in_process: bool = True,
        recover: bool = False,
        on_failure: Callable[[], None] | None = None,
        wait_timeout: float | None = None,
        uploader_idle: float = 0.0,
    ) -> None:
        self.broken = False  # the journal could not be written: nothing more is
        self._on_failure = on_failure
        self.target = target
        self._open_run = open_run
        self._in_process = in_process
        # What every uploader of the run is started with, once the run has its journal.
        self._link_settings = functools.partial(LinkSettings, interval=interval, on_open=on_open, open_run=open_run,
                                                recover=recover, idle=uploader_idle)
        self._wait_timeout = wait_timeout
        self._closed = False
        self._late_lock = threading.Lock()
        self._swap_lock = threading.Lock()  # the end and a take-over of the upload, one at a time
        self.journal: JournalWriter
        self._settings: LinkSettings
        self._uploader: UploaderLink

    @classmethod
    def for_journal(cls, journal: JournalWriter, target: RunTarget, **options: Any) -> Writer:
        """A writer into ``journal``, one made already (a test's), with the options of
        :class:`Writer`. It is never started: :meth:`flush` and :meth:`close` upload
        on the calling thread."""
        writer = cls(target, **options)
        writer.journal = journal
        writer._settings = writer._link_settings(journal, wait_timeout=writer._wait_timeout or default_timeout(target.store))
        writer._uploader = UploaderThread(writer._settings)
        return writer

    def start(self, tags: Mapping[str, str] | None = None) -> None:
        """Create the run's journal, write ``tags`` into it first, and start uploading
        (the uploader opens the run first). Raises the ``OSError`` of a journal that
        cannot be created or take its first line: then nothing has started, and no
        journal is left behind."""
        journal = JournalWriter.create(self.target)
        if tags:  # redacted as set_tags does
            try:
                journal.record({"kind": "tags", "items": {key: redact_repr(str(value)) for key, value in tags.items()}})
            except OSError:
                journal.discard()
                raise
        self.journal = journal
        self._settings = self._link_settings(journal, wait_timeout=self._wait_timeout or default_timeout(self.target.store))
        self._uploader = start_uploader(self._settings, self._in_process, on_death=self._take_over)

    def _take_over(self) -> bool:
        """Upload on a thread of this process instead: the uploader's process could not
        start, or stopped before the run ended. False once the run is ending: then
        :meth:`close` does it."""
        with self._swap_lock:
            if self._closed:
                return False
            self._uploader = UploaderThread(self._settings)
            self._uploader.start()
            return True

    # --- the run ----------------------------------------------------------------------
    @property
    def uploader_pid(self) -> int | None:
        """The process that uploads this run (None: a thread of this one)."""
        return self._uploader.pid

    @property
    def run_id(self) -> str | None:
        """The MLflow run id; waits until the run is open (``None`` if it could not be)."""
        uploader = self._uploader
        run_id = uploader.run_id
        return run_id if uploader is self._uploader else self._uploader.run_id  # taken over meanwhile

    @property
    def is_open(self) -> bool:
        return self._uploader.is_open

    # --- what loggers call (cheap: one append) ----------------------------------------
    def log_params(self, params: Mapping[str, str]) -> None:
        self._write(self.journal.record, {"kind": "params", "items": dict(params)})

    def log_metric(self, key: str, value: float, step: int = 0, timestamp: int | None = None) -> None:
        """One metric's value; ``timestamp`` (ms since the epoch) is now unless given."""
        value, step = float(value), int(step)
        if timestamp is None:
            timestamp = int(time.time() * 1000)
        if self._closed or self.broken:
            self._write(self.journal.record_metric, key, value, timestamp, step)
            return
        # _write's common case written out: a scoring function in a loop comes here on
        # every call, and each Python call on its way costs it about as much as the line.
        try:
            self.journal.record_metric(key, value, timestamp, step)
        except OSError as error:
            self._give_up(error)

    def log_metrics(self, metrics: Mapping[str, float], step: int = 0) -> None:
        timestamp = int(time.time() * 1000)
        for key, value in metrics.items():
            self._write(self.journal.record_metric, key, float(value), timestamp, int(step))

    def set_tag(self, key: str, value: str) -> None:
        self.set_tags({key: value})

    def set_tags(self, tags: Mapping[str, str]) -> None:
        """Tags, their values searched for secrets (``'api_token': …``, ``password=…``, URL
        credentials: :func:`pypads.core.privacy.redact_repr`): a failure's message or a
        model's reason may quote a param."""
        self._write(self.journal.record, {"kind": "tags", "items": {key: redact_repr(str(value)) for key, value in tags.items()}})

    def log_bytes(self, artifact_path: str, content: bytes) -> None:
        """Store ``content`` as the artifact ``artifact_path`` (replacing an earlier one)."""
        self._late(lambda: self.journal.stage(artifact_path, content))

    def append_bytes(self, artifact_path: str, content: bytes) -> None:
        """Add ``content`` to the end of the artifact ``artifact_path``."""
        self._late(lambda: self.journal.stage(artifact_path, content, append=True))

    def log_file(self, artifact_path: str, write: Callable[[BinaryIO], None]) -> None:
        """Store the artifact ``artifact_path`` as ``write`` writes it into the file it
        is given: for large content, which is then never held in memory as bytes."""
        self._late(lambda: self.journal.stage_file(artifact_path, write))

    def log_named_file(self, folder: str, write: Callable[[BinaryIO], str]) -> str | None:
        """Like :meth:`log_file`, for an artifact in ``folder`` named by what ``write``
        returns once it has written it; returns that name (None if the journal could
        not take it)."""
        names: list[str] = []
        self._late(lambda: names.append(self.journal.stage_named_file(folder, write)))
        return names[0].rsplit("/", 1)[-1] if names else None

    def log_entry(self, entry: Mapping[str, Any], content: bytes | None = None) -> None:
        """A journal entry the uploader turns into more than a value: a model (its pickle
        in ``content``), a dataset input, a child run (see ``JournalWriter.record_entry``)."""
        self._late(lambda: self.journal.record_entry(dict(entry), content))

    def log_text(self, artifact_path: str, text: str) -> None:
        self.log_bytes(artifact_path, text.encode("utf-8"))

    def _write(self, write: Callable[..., None], *args: Any) -> None:
        if self._closed or self.broken:
            self._late(lambda: write(*args))
            return
        try:  # the common case, without a closure to build
            write(*args)
        except OSError as error:
            self._give_up(error)

    def _late(self, write: Callable[[], Any]) -> None:
        if self.broken:
            return
        if not self._closed:
            try:
                write()
            except OSError as error:
                self._give_up(error)
            return
        # A call that outlived its run (another thread was still inside it at end_run).
        # Its uploader is gone, so it is uploaded at once, on this thread (which imports
        # MLflow here if need be), one late call at a time. If the end did not reach
        # MLflow, the journal is still there and keeps it for a later PyPads().
        with self._late_lock:
            try:
                recreated = self.journal.reopen(self._uploader.run_id)
                write()
                self.journal.close()
            except OSError as error:
                self._give_up(error)
                return
            if recreated:
                Uploader(self.journal.folder, open_run=self._open_run, pictures=False).finish(None)

    def _give_up(self, error: OSError) -> None:
        """The journal cannot be written (a full disk, a folder removed): stop writing,
        say so once on stderr, and let the tracker stop tracking. What the journal holds
        still goes to MLflow, and the run still ends."""
        if self.broken:
            return
        self.broken = True
        self.journal.release_reserve()  # room for the few bytes that end the run
        say_on_stderr(f"pypads: cannot write to its journal in {self.journal.folder} ({error}); "
                            "tracking stops here, what was written so far goes to MLflow")
        if self._on_failure is not None:
            self._on_failure()

    # --- getting it into MLflow -----------------------------------------------------
    def flush(self) -> bool:
        """Upload everything submitted so far; when this returns True it is visible in
        MLflow. Waits for the run to be open; False if it could not be, if something did
        not reach MLflow, or when called from a signal handler in the middle of an upload."""
        return self._uploader.flush()

    def close(self, status: str | None = None, timeout: float | None = None) -> bool:
        """Upload everything, end the run with ``status`` (if given) and stop. Waits as
        long as MLflow answers: gives up once one call has gone unanswered for ``timeout``
        seconds (by default the store's :func:`~pypads.to_mlflow.timeouts.default_timeout`).
        True when everything is in MLflow; else the journal keeps the run (with
        ``status``), the uploader goes on trying for a while, and a warning says so."""
        with self._swap_lock:
            if self._closed:
                return False
            self._closed = True
            uploader = self._uploader
        if timeout is None:
            timeout = default_timeout(self.target.store)
        if status is not None:
            try:
                self.journal.set_status(status)
            except OSError as error:  # the journal is only the fallback; go on closing
                warn_locally("status", f"could not note the run's status in {self.journal.folder}: {error}")
        # Writes from other threads wait until the end is through: then they go to the
        # journal the uploader left (see _late), never into one it is deleting.
        with self._late_lock:
            self.journal.close()  # the uploader deletes the files: do not hold them open
            outcome = uploader.close(status, timeout)
            if outcome is Outcome.DIED and not self.journal.exists():
                # It died deleting the journal, with the run complete in MLflow.
                self.journal.discard()
                outcome = Outcome.CLOSED
            elif outcome is Outcome.DIED:  # too late for _take_over: the end is uploaded from here
                uploader = self._uploader = UploaderThread(self._settings)
                uploader.start()
                outcome = uploader.close(status, timeout)
        if outcome is Outcome.CLOSED:
            return True
        if outcome is Outcome.TIMED_OUT:  # an uploader thread ends with the script; a process goes on
            later = "" if isinstance(uploader, UploaderThread) else f"its uploader tries for {PATIENCE / 60:g} minutes, then "
            warn_locally("close", f"MLflow at {self.target.store.display_uri} did not answer for {timeout:g} s: "
                         f"the run's data stays in {self.journal.folder}; {later}`pypads sync` uploads what is left")
        return False
