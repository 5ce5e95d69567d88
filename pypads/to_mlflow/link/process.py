"""The uploader in a process of its own (:func:`pypads.to_mlflow.uploader.main`), driven through
its stdin with :mod:`pypads.to_mlflow.wire` commands; its answers are read on a thread here. The
process is a spare one that waited for this script where one did (:mod:`pypads.to_mlflow.link.spare`)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable

from pypads.core import PatchingFinder
from pypads.to_mlflow.link.base import LinkSettings, Outcome, hold_mlflow_import
from pypads.to_mlflow.link.spare import SpareUploader, claim_spare
from pypads.to_mlflow.timeouts import AnswerClock
from pypads.to_mlflow.uploader.reports import warn_locally
from pypads.to_mlflow.wire import (
    Answer,
    ClockReading,
    Close,
    Closed,
    Flush,
    Flushed,
    Opened,
    Warned,
    WireError,
    decode_answer,
    encode,
)

SYS_PATH_VARIABLE = "PYPADS_UPLOADER_SYS_PATH"
LAUNCH = (f"import json, os, sys; sys.path[:] = json.loads(os.environ.pop({SYS_PATH_VARIABLE!r}))\n"
          "from pypads.to_mlflow.uploader import main; main()")


class UploaderProcess:
    """An :class:`~pypads.to_mlflow.link.base.UploaderLink` to an uploader process.

    ``on_death`` is called if the process stops before the run ended; it returns True
    if another uploader took over.
    """

    def __init__(self, settings: LinkSettings, on_death: Callable[[], bool] | None = None) -> None:
        self.journal = settings.journal
        self.interval = settings.interval
        self.recover = settings.recover
        self.wait_timeout = settings.wait_timeout
        self.idle = settings.idle
        self.on_death = on_death
        self.clock = AnswerClock()  # set from the process' reports
        self._on_open = settings.on_open
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
        self._process: subprocess.Popen[bytes] | SpareUploader | None = None
        self._import_hold: PatchingFinder | None = None

    def start(self) -> bool:
        """Claim a spare uploader, or start a process; False if neither can be had (then
        a thread uploads)."""
        arguments = [str(self.journal.folder), "--interval", str(self.interval), "--idle", str(self.idle)]
        if sys.argv and sys.argv[0]:
            arguments.append(f"--script={sys.argv[0]}")  # one argument, even for "-c"
        if self.recover:
            arguments.append("--recover")
        spare = claim_spare(arguments) if self.idle > 0 else None
        if spare is not None:
            self._process = spare
        elif not self._start_process(arguments):
            return False
        if "mlflow" not in sys.modules:
            self._import_hold = hold_mlflow_import(self._wait_until_open)
        _PROCESSES.add(self)
        # The uploader's start-up (MLflow's import) is timed like an MLflow call of its
        # own, so that a start-up that hangs cannot hang the script's end either.
        self.clock.started()
        threading.Thread(target=self._read_answers, name="pypads-uploader-answers", daemon=True).start()
        return True

    def _start_process(self, arguments: list[str]) -> bool:
        if not sys.executable or getattr(sys, "frozen", False):
            return False  # no interpreter to start (a frozen app would start itself again)
        # The same imports as the script: its sys.path, with what it added at run time.
        environment = {**os.environ, SYS_PATH_VARIABLE: json.dumps(sys.path)}
        try:
            # A session of its own: Ctrl-C in a terminal reaches the script, which ends the run.
            self._process = subprocess.Popen([sys.executable, "-c", LAUNCH, *arguments], stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, env=environment, start_new_session=True)
        except (OSError, ValueError) as error:
            warn_locally("start", f"pypads could not start its uploader process ({error}); it uploads on a thread")
            return False
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
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

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

    def close(self, status: str | None, timeout: float) -> Outcome:
        process = self._process
        if process is None:
            return Outcome.KEPT
        self._command(Close(status or None, timeout))
        if self.clock.wait(lambda: self._said_closed.is_set() or self._ended.is_set(), timeout):
            # Its exit is not waited for: nothing is left to do.
            outcome = Outcome.CLOSED if self._closed_ok else Outcome.DIED if self.died else Outcome.KEPT
        else:
            # MLflow does not answer (a server down or restarting): the script goes on, and
            # the uploader keeps trying on its own, for a bounded time (timeouts.PATIENCE),
            # having let go of the script's output; the journal keeps the run meanwhile.
            self.timed_out = True
            with self._lock:  # nothing more to say: it lets go of our output now
                _close_input(process)
            outcome = Outcome.TIMED_OUT
        _PROCESSES.discard(self)
        if self._import_hold is not None:
            self._import_hold.uninstall()
        return outcome

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
        code = self._process.wait()
        try:
            warn_locally("uploader", f"pypads' uploader stopped before the run ended"
                         f"{'' if code is None else f' (exit code {code})'}; {then}")
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


def _close_input(process: subprocess.Popen[bytes] | SpareUploader) -> None:
    if isinstance(process, SpareUploader):
        process.close_input()
    elif process.stdin is not None:
        with contextlib.suppress(OSError, ValueError):
            process.stdin.close()
