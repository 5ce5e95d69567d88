"""The one writer: every param, metric, tag and artifact of a run goes through here.

On the calling thread a submission costs one append to the run's journal on local disk
(see ``journal.py``). An uploader (see ``uploader.py``) does all the talking to MLflow:
it opens the run, uploads the journal as it grows (every ``interval`` seconds, in as few
MLflow calls as possible) and, on :meth:`Writer.close`, sends the rest and ends the run.

The uploader runs in a process of its own, so that a script that does not use MLflow
never loads it: MLflow's import, its memory and its database work stay out of the
script's process. A script that has imported MLflow pays for it already; there the
uploader is a thread (``in_process``).

If the script imports MLflow while the run is being opened, that import waits until the
run exists: the script's own ``mlflow.log_*`` calls then find it (see
``hold_mlflow_import``).

A store that does not answer never holds the script: ``close`` gives up after
``timeout`` seconds without an answer and leaves the data in the journal, which the
next ``PyPads()`` uploads (:func:`pypads.uploader.recover`).
"""

from __future__ import annotations

# Imported now, not by MLflow's import on the uploader's thread: it registers a threading
# exit hook, which Python refuses once it shuts down, and a short script can end while
# the uploader is still importing MLflow (the run would then stay in the journal).
import concurrent.futures.thread  # noqa: F401
import importlib
import json
import os
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any, BinaryIO

from pypads.errors import say_on_stderr
from pypads.journal import Journal
from pypads.patching.importer import PatchingFinder
from pypads.store import RunTarget
from pypads.uploader import (
    AnswerClock,
    OpenRun,
    Recovery,
    Uploader,
    default_timeout,
    recovery_timeout,
    warn_locally,
)
from pypads.wire import Answer, ClockReading, Close, Closed, Flush, Flushed, Opened, Warned, WireError, decode_answer, encode

SYS_PATH_VARIABLE = "PYPADS_UPLOADER_SYS_PATH"
LAUNCH = (f"import json, os, sys; sys.path[:] = json.loads(os.environ.pop({SYS_PATH_VARIABLE!r}))\n"
          "from pypads.uploader import main; main()")


class Writer:
    """Journals everything of one run; an uploader sends it to MLflow.

    Args:
        journal: the run's journal on local disk.
        target: the run to open (or join) in MLflow.
        interval: seconds between two uploads.
        on_open: called with the run id once the run exists, before a script's
            ``import mlflow`` can return.
        open_run: how to open it (uploader thread only): ``target -> (MlflowClient,
            run id)``; by default :func:`pypads.connection.open_run`.
        in_process: upload on a thread of this process instead of a process of its own.
        recover: also upload the journals that earlier processes left behind.
        on_failure: called once if the journal cannot be written (then nothing more is).
        wait_timeout: how long asking for the run id, importing MLflow or flushing may
            wait for one MLflow call (opening the run, say) that does not answer; by
            default :func:`~pypads.uploader.default_timeout` of the store.

    Nothing is sent before :meth:`start`.
    """

    def __init__(
        self,
        journal: Journal,
        target: RunTarget,
        interval: float = 1.0,
        on_open: Callable[[str], None] | None = None,
        open_run: OpenRun | None = None,
        in_process: bool = True,
        recover: bool = False,
        on_failure: Callable[[], None] | None = None,
        wait_timeout: float | None = None,
    ) -> None:
        self.journal = journal
        self.broken = False  # the journal could not be written: nothing more is
        self._on_failure = on_failure
        self.target = target
        self._open_run = open_run
        self._closed = False
        self._late_lock = threading.Lock()
        self._swap_lock = threading.Lock()  # the end and a take-over of the upload, one at a time
        self._settings = (journal, interval, on_open, open_run, recover,
                          wait_timeout or default_timeout(target.store))
        self._uploader: UploaderThread | UploaderProcess
        if in_process:
            self._uploader = UploaderThread(*self._settings)
        else:
            self._uploader = UploaderProcess(*self._settings, on_death=self._take_over)

    def start(self) -> None:
        """Start uploading (opening the run first)."""
        if not self._uploader.start():
            self._take_over()

    def _take_over(self) -> bool:
        """Upload on a thread of this process instead: the uploader's process could not
        start, or stopped before the run ended. False once the run is ending: then
        :meth:`close` does it."""
        with self._swap_lock:
            if self._closed:
                return False
            self._uploader = UploaderThread(*self._settings)
            self._uploader.start()
            return True

    # --- the run ----------------------------------------------------------------------
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

    def log_metric(self, key: str, value: float, step: int = 0) -> None:
        self._write(self.journal.record_metric, key, float(value), int(time.time() * 1000), int(step))

    def log_metrics(self, metrics: Mapping[str, float], step: int = 0) -> None:
        timestamp = int(time.time() * 1000)
        for key, value in metrics.items():
            self._write(self.journal.record_metric, key, float(value), timestamp, int(step))

    def set_tag(self, key: str, value: str) -> None:
        self._write(self.journal.record, {"kind": "tags", "items": {key: str(value)}})

    def set_tags(self, tags: Mapping[str, str]) -> None:
        self._write(self.journal.record, {"kind": "tags", "items": {key: str(value) for key, value in tags.items()}})

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
        in ``content``), a dataset input, a child run (see ``Journal.record_entry``)."""
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
                Uploader(self.journal.folder, open_run=self._open_run).finish(None)

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
        """Upload everything, end the run with ``status`` (if given) and stop.

        Waits as long as the upload takes, but gives up once MLflow has not answered
        one call for ``timeout`` seconds (by default :func:`~pypads.uploader.default_timeout`
        of the store). Returns True when everything is in MLflow and
        the journal is gone; otherwise the journal keeps it (with ``status``) for the
        next ``PyPads()``, and a warning says so.
        """
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
            closed = uploader.close(status, timeout)
            if uploader.died and not self.journal.exists():
                # It died deleting the journal, with the run complete in MLflow.
                self.journal.discard()
                closed = True
            elif uploader.died:  # too late for _take_over: the end is uploaded from here
                uploader = self._uploader = UploaderThread(*self._settings)
                uploader.start()
                closed = uploader.close(status, timeout)
        if closed:
            return True
        if uploader.timed_out:
            warn_locally("close", f"MLflow at {self.target.store.display_uri} did not answer for {timeout:g} s: "
                         f"the run's data stays in {self.journal.folder} and the next PyPads() uploads it")
        return False


class UploaderThread:
    """The uploader on a thread of this process."""

    died = False  # a thread of ours does not die on its own

    def __init__(self, journal: Journal, interval: float, on_open: Callable[[str], None] | None,
                 open_run: OpenRun | None, recover: bool, wait_timeout: float) -> None:
        self.uploader = Uploader(journal.folder, open_run=open_run, on_open=on_open)
        self.interval = interval
        self._recovery = Recovery() if recover else None
        self._status: str | None = None
        self._timeout = default_timeout(self.uploader.target.store)
        self._wait_timeout = wait_timeout
        self._finished = False
        self.timed_out = False
        self._stopped = threading.Event()
        self._import_hold: PatchingFinder | None = None
        self._thread = threading.Thread(target=self._loop, name="pypads-writer", daemon=True)

    def start(self) -> bool:
        if "mlflow" not in sys.modules:
            self._import_hold = hold_mlflow_import(self.uploader.open)
        self._thread.start()
        return True

    @property
    def run_id(self) -> str | None:
        opened = self.uploader.opened
        if not opened.is_set():
            self.uploader.clock.wait(opened.is_set, self._wait_timeout)
        return self.uploader.run_id

    @property
    def is_open(self) -> bool:
        return self.uploader.opened.is_set() and self.uploader.run_id is not None

    def flush(self) -> bool:
        return self.uploader.drain()

    def close(self, status: str | None, timeout: float) -> bool:
        self._status, self._timeout = status, timeout
        self._stopped.set()
        if self._thread is threading.current_thread() or self.uploader.draining_here:
            return False  # a signal handler interrupted our own upload: the journal keeps it
        if self._thread.ident is None:
            self._thread.start()  # never started: the final upload still happens
        if not self.uploader.clock.wait(lambda: not self._thread.is_alive(), timeout):
            self.timed_out = True
            return False
        if self._import_hold is not None:
            self._import_hold.uninstall()
        return self._finished

    def _loop(self) -> None:
        if self._import_hold is not None:
            # Import MLflow here; whichever thread runs its import opens the run in it.
            try:
                importlib.import_module("mlflow")
            except Exception:  # noqa: S110 - open() below reports it, and run_id stops waiting
                pass
        if self.uploader.open() and self._recovery is not None:
            self._recovery.start()
        while not self._stopped.wait(self.interval):
            if self.uploader.journal.has_news():
                self.uploader.drain()
        if self._recovery is not None and self._recovery.started:
            self._recovery.wait(recovery_timeout(self._timeout))
        self._finished = self.uploader.finish(self._status)


class UploaderProcess:
    """The uploader in a process of its own (:func:`pypads.uploader.main`), driven
    through its stdin; its answers (JSON lines on its stdout) are read on a thread here."""

    def __init__(self, journal: Journal, interval: float, on_open: Callable[[str], None] | None,
                 open_run: OpenRun | None, recover: bool, wait_timeout: float,
                 on_death: Callable[[], bool] | None = None) -> None:
        self.journal = journal
        self.interval = interval
        self.recover = recover
        self.wait_timeout = wait_timeout
        self.on_death = on_death  # True if another uploader took over
        self.clock = AnswerClock()  # set from the process' reports
        self._on_open = on_open
        self._run_id: str | None = None
        self._opened = threading.Event()
        self._ended = threading.Event()  # the process has closed its answers
        self._closed_ok: bool | None = None  # None until the process says how its end went
        self._said_closed = threading.Event()
        self.timed_out = False
        self.died = False  # stopped before it said the run was closed
        self._lock = threading.Lock()
        self._flushes: dict[int, tuple[threading.Event, list[bool]]] = {}
        self._requests = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._import_hold: PatchingFinder | None = None

    def start(self) -> bool:
        """Start the process; False if it cannot be started (then a thread uploads)."""
        if not sys.executable or getattr(sys, "frozen", False):
            return False  # no interpreter to start (a frozen app would start itself again)
        command = [sys.executable, "-c", LAUNCH, str(self.journal.folder), "--interval", str(self.interval)]
        if sys.argv and sys.argv[0]:
            command.append(f"--script={sys.argv[0]}")  # one argument, even for "-c"
        if self.recover:
            command.append("--recover")
        # The same imports as the script: its sys.path, with what it added at run time.
        environment = {**os.environ, SYS_PATH_VARIABLE: json.dumps(sys.path)}
        try:
            # A session of its own: Ctrl-C in a terminal reaches the script, which ends the run.
            self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             env=environment, start_new_session=True)
        except (OSError, ValueError) as error:
            warn_locally("start", f"pypads could not start its uploader process ({error}); it uploads on a thread")
            return False
        if "mlflow" not in sys.modules:
            self._import_hold = hold_mlflow_import(self._wait_until_open)
        _PROCESSES.add(self)
        # The uploader's start-up (MLflow's import) is timed like an MLflow call of its
        # own, so that a start-up that hangs cannot hang the script's end either.
        self.clock.started()
        threading.Thread(target=self._read_answers, name="pypads-uploader-answers", daemon=True).start()
        return True

    @property
    def run_id(self) -> str | None:
        self._wait_until_open()
        return self._run_id

    def _wait_until_open(self) -> None:
        # Bounded: a store that does not answer costs wait_timeout after the uploader's
        # start-up, and as much again for the call that opens the run (each timed apart).
        if not self._opened.is_set():
            self.clock.wait(self._opened.is_set, self.wait_timeout)

    @property
    def is_open(self) -> bool:
        return self._opened.is_set() and self._run_id is not None

    def flush(self) -> bool:
        with self._lock:
            self._requests += 1
            number = self._requests
            answer: tuple[threading.Event, list[bool]] = (threading.Event(), [])
            self._flushes[number] = answer
        if not self._command(Flush(number)):
            return False
        if not self.clock.wait(answer[0].is_set, self.wait_timeout):
            return False  # MLflow does not answer: the journal keeps it
        return bool(answer[1] and answer[1][0])

    def close(self, status: str | None, timeout: float) -> bool:
        process = self._process
        if process is None:
            return False
        self._command(Close(status or None, timeout))
        if self.clock.wait(lambda: self._said_closed.is_set() or self._ended.is_set(), timeout):
            ok = bool(self._closed_ok)  # its exit is not waited for: nothing is left to do
        else:  # MLflow does not answer: stop the uploader, the journal keeps the run
            self.timed_out = True
            process.kill()
            process.wait()
            ok = False
        _PROCESSES.discard(self)
        if self._import_hold is not None:
            self._import_hold.uninstall()
        return ok

    def forget_in_forked_child(self) -> None:
        """A forked child must not hold the uploader's input open: the uploader learns
        that the script is gone when its input ends."""
        if self._process is not None and self._process.stdin is not None:
            # /dev/null in its place, not a closed descriptor: the file object closes it
            # again some day, and by then the number may belong to something else.
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self._process.stdin.fileno())
            os.close(null)

    def _command(self, command: Flush | Close) -> bool:
        stdin = self._process.stdin if self._process is not None else None
        if stdin is None:
            return False
        try:
            with self._lock:
                stdin.write(encode(command))
                stdin.flush()
            return True
        except (OSError, ValueError):  # the uploader is gone
            return False

    def _read_answers(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        try:
            for line in self._process.stdout:
                try:
                    self._answer(decode_answer(line))
                except WireError as error:
                    warn_locally("wire", f"pypads ignored a malformed answer of its uploader: {error}")
                except Exception:  # noqa: S110 - e.g. warnings made errors: this thread must go on
                    pass
        except OSError:
            pass
        if self._closed_ok is None and not self.timed_out:
            self._died()
        self._opened.set()
        self._ended.set()
        with self._lock:
            for event, _ in self._flushes.values():
                event.set()

    def _died(self) -> None:
        assert self._process is not None
        _PROCESSES.discard(self)
        if self._import_hold is not None:
            self._import_hold.uninstall()
        self.died = True
        taken_over = self.on_death is not None and self.on_death()
        # Not taken over: the run is ending, and its end uploads from the script (close()).
        then = "a thread of the script uploads instead" if taken_over else "the script uploads the rest as it ends the run"
        try:
            warn_locally("uploader", f"pypads' uploader stopped before the run ended (exit code "
                         f"{self._process.wait()}); {then}")
        except Exception:  # noqa: S110 - warnings made errors: nobody to raise to on this thread
            pass

    def _answer(self, message: Answer) -> None:
        if isinstance(message, ClockReading):
            # Each call restarts the clock, the first one too: a slow start-up on a busy
            # host must not eat into the time of a store that answers.
            if message.busy:
                self.clock.started()
            else:
                self.clock.answered()
        elif isinstance(message, Opened):
            self._run_id = message.run_id
            if self._run_id is not None and self._on_open is not None:
                self._on_open(self._run_id)
            self._opened.set()
        elif isinstance(message, Flushed):
            with self._lock:
                event, result = self._flushes.pop(message.number, (threading.Event(), []))
            result.append(message.ok)
            event.set()
        elif isinstance(message, Warned):
            warn_locally(message.key, message.message)
        elif isinstance(message, Closed):
            self._closed_ok = message.ok
            self._said_closed.set()


_PROCESSES: weakref.WeakSet[UploaderProcess] = weakref.WeakSet()


def _forget_uploaders_in_forked_child() -> None:
    for link in list(_PROCESSES):
        link.forget_in_forked_child()
    _PROCESSES.clear()


os.register_at_fork(after_in_child=_forget_uploaders_in_forked_child)


def hold_mlflow_import(open_run: Callable[[], Any]) -> PatchingFinder:
    """Make the first import of MLflow, by any thread, open the run before it returns.

    MLflow keeps the active run per thread, so the run the uploader opens is not the
    script's active run. The script's ``mlflow.log_*`` calls still reach it through
    ``MLFLOW_RUN_ID`` (set by ``on_open``), but only once the run exists: a script that
    imports MLflow right after ``PyPads()`` would otherwise log into a run of its own.
    Python makes every other thread's import of a module wait while one thread executes
    it, and this hook runs inside that execution.
    """
    finder: PatchingFinder

    def loaded(_module: ModuleType) -> None:
        finder.uninstall()
        open_run()

    finder = PatchingFinder(lambda name: name == "mlflow", loaded)
    finder.install()
    return finder

