"""Uploads a run's journal into MLflow, in a process of its own, until the script closes it.

The writer starts it (see :mod:`pypads.to_mlflow.link.process`) as
``python -c "from pypads.to_mlflow.uploader import main; main()"`` with :func:`main`'s arguments:
``<journal folder> [--interval S] [--recover] [--script PATH] [--idle S]``, or claims
a spare one (``--idle``: see :mod:`pypads.to_mlflow.uploader.spare`).

In a process of its own, MLflow's import (a second, 170 MB) and its SQLAlchemy work
never touch the script: not its memory, not its GIL. The process reads commands on
stdin (:class:`~pypads.to_mlflow.wire.Flush`, :class:`~pypads.to_mlflow.wire.Close`; end of input means the
script is gone) and answers on the stdout it was given (see :mod:`pypads.to_mlflow.wire`).
"""

from __future__ import annotations

import argparse
import os
import queue
import signal
import sys
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, NoReturn

from pypads.to_mlflow import evaluation
from pypads.to_mlflow.access import mlflow_connection
from pypads.to_mlflow.timeouts import PATIENCE, AnswerClock, default_timeout, recovery_timeout
from pypads.to_mlflow.uploader.drawing import draw_later, drawing_may_go, pictures_drawn, script_waits
from pypads.to_mlflow.uploader.recovery import Recovery
from pypads.to_mlflow.uploader.spare import MOST_RUNS, release, take_over, wait_for_claim
from pypads.to_mlflow.uploader.staleness import sqlite_identity
from pypads.to_mlflow.uploader.uploading import Uploader
from pypads.to_mlflow.wire import (
    ClockReading,
    Closed,
    Command,
    Flush,
    Flushed,
    Message,
    Opened,
    Warned,
    WireError,
    decode_command,
    encode,
)


class _Channel:
    """Answers to the script, from any thread of this process."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, message: Message) -> None:
        with self._lock:
            try:
                self._stream.write(encode(message))
                self._stream.flush()
            except (OSError, ValueError):  # the script is gone: the journal is what counts
                pass


class _ReportingClock(AnswerClock):
    """An answer clock whose readings the script sees too (it decides how long to wait)."""

    def __init__(self, channel: _Channel) -> None:
        # MLflow is imported by the time a call fails: only then is the question asked.
        super().__init__(passing=lambda error: mlflow_connection.passing_failure(error))
        self._channel = channel

    def started(self) -> None:
        super().started()
        self._channel.send(ClockReading(busy=True))

    def answered(self) -> None:
        super().answered()
        self._channel.send(ClockReading(busy=False))


def _read_commands(stream: BinaryIO, commands: queue.Queue[Command | None], channel: _Channel,
                   script_gone: Callable[[], None]) -> None:
    try:
        for line in stream:
            try:
                commands.put(decode_command(line))
            except WireError as error:  # not from this pypads' writer: say so, and read on
                channel.send(Warned("wire", f"pypads' uploader ignored a malformed command: {error}"))
    except (OSError, ValueError):
        # A spare's socket is reset, not ended, when the script dies with answers of
        # ours still unread (SIGTERM while we report MLflow's calls): it is gone all the same.
        pass
    finally:
        # End of input: the script is gone (or done). Let go of its output now, from this
        # thread: the main one may be inside an MLflow call that takes minutes to give up.
        # Come what may: else the run waits for a command that never comes, for ever.
        script_gone()
        commands.put(None)


# Letting go of one script's output and taking over the next one's, one at a time: a
# spare's previous script may end (and its reader let go) while the next one is served.
_output_lock = threading.Lock()


def _let_go_of_the_scripts_output() -> None:
    """Stop holding the script's stderr (our stdout is a copy of it too): once the script
    is gone or done, a caller that captures its output waits until every process that
    holds the pipe has closed it, and what is left here may take a while."""
    null = os.open(os.devnull, os.O_WRONLY)
    for descriptor in (1, 2):
        os.dup2(null, descriptor)
    os.close(null)


def serve(folder: Path, interval: float, recover_left: bool, commands_from: BinaryIO, answers_to: BinaryIO) -> bool:
    """Upload ``folder`` until the script closes it (or is gone). Closing gives up once
    MLflow has not answered for the timeout the script gives (or :func:`default_timeout`).
    True if this process may serve another run; False if the run is not whole in MLflow."""
    # MLflow prints a link to every run it ends on a server ("View run … at:"), runs the
    # script never started itself (a search's candidates): into the script's stderr,
    # which this process shares. Set for each run: a spare takes over the next script's environment.
    os.environ["MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT"] = "true"
    # MLflow's client tries a call to a server that is down for some four minutes, its
    # pauses doubling to two minutes: what waited would arrive minutes after the server
    # is back. A few quick tries, then this process' own, whose pauses stay short (see
    # timeouts.AnswerClock). Set by the user, theirs stand.
    # MLflow's news of its own work ("Creating initial MLflow database tables…") is nothing
    # the script caused either: warnings and errors only, read at MLflow's import.
    for variable, value in (("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "2"), ("MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR", "1"),
                            ("MLFLOW_LOGGING_LEVEL", "WARNING")):
        os.environ.setdefault(variable, value)
    with script_waits():  # until its run is open: a script importing MLflow waits for it
        return _serve(folder, interval, recover_left, commands_from, answers_to)


def _serve(folder: Path, interval: float, recover_left: bool, commands_from: BinaryIO, answers_to: BinaryIO) -> bool:
    channel = _Channel(answers_to)
    clock = _ReportingClock(channel)
    uploader = Uploader(folder, clock, warn=lambda key, message: channel.send(Warned(key, message)))
    uploader.journal.set_uploader(os.getpid())
    served = threading.Event()

    def let_go() -> None:
        with _output_lock:
            if not served.is_set():  # else this run's output is long let go, and 2 may be the next's
                _let_go_of_the_scripts_output()

    commands: queue.Queue[Command | None] = queue.Queue()
    def script_gone() -> None:
        clock.give_up_after(PATIENCE)  # a server down for good must not keep this process for ever
        let_go()

    threading.Thread(target=_read_commands, args=(commands_from, commands, channel, script_gone), name="pypads-commands",
                     daemon=True).start()
    uploader.open()
    channel.send(Opened(uploader.run_id))
    drawing_may_go.set()
    threading.Thread(target=evaluation.import_ahead, name="pypads-import-ahead", daemon=True).start()
    recovery = Recovery(lambda key, message: channel.send(Warned(key, message))).start() if recover_left else None
    status: str | None
    while True:
        try:
            command = commands.get(timeout=interval)
        except queue.Empty:
            if uploader.journal.has_news():
                uploader.drain()
            continue
        if isinstance(command, Flush):
            channel.send(Flushed(command.number, uploader.drain()))
            continue
        if command is None:  # killed: end the run the way recovery would
            status, timeout = uploader.journal.status() or "KILLED", default_timeout(uploader.target.store)
        else:
            status, timeout = command.status, command.timeout
        break
    drawing_may_go.clear()  # the script waits for its run's end
    finished: list[bool] = []
    finishing = threading.Thread(target=lambda: finished.append(uploader.end(status)), daemon=True)
    finishing.start()
    if not clock.wait(lambda: not finishing.is_alive(), timeout):
        channel.send(Closed(False))  # the script goes on: its wait has its bound
        let_go()
        drawing_may_go.set()  # nobody waits for this process now: an earlier run's pictures go on
        _finish_when_the_store_is_back(uploader, finishing, finished, clock, commands)
        return False
    channel.send(Closed(bool(finished and finished[0])))
    drawing_may_go.set()
    with _output_lock:
        _let_go_of_the_scripts_output()
        served.set()
    try:
        answers_to.close()  # the script's reader sees the end of its answers
    except (OSError, ValueError):
        pass  # what was left unsent is for a script that is gone; this process serves on
    if finished and finished[0]:  # the pictures: the script need not wait for them
        draw_later(uploader, commands, script_gone=command is None)  # None: its input has ended
    if recovery is not None:  # the script need not wait for other runs' journals
        recovery.wait(recovery_timeout(timeout))
    identity = sqlite_identity(uploader.target.store.tracking_uri)
    if identity is not None:
        _sqlite_files[identity[0]] = identity[1]
    # A run not whole in MLflow: this process ends rather than wait as a spare, so that
    # its journal, which names this process as its uploader, is left to a later sync.
    return bool(finished and finished[0])


def _finish_when_the_store_is_back(uploader: Uploader, finishing: threading.Thread, finished: list[bool],
                                   clock: AnswerClock, commands: queue.Queue[Command | None]) -> None:
    """The script has gone on without its run's end: MLflow did not answer (a server
    down or restarting). Keep trying for :data:`PATIENCE` seconds, then leave the
    journal to ``pypads sync`` or the next PyPads(); the script's output is let go of."""
    clock.give_up_after(PATIENCE)
    # A call in progress past the deadline ends with MLflow's own request timeout; no
    # later than that, this process exits and the journal stays.
    finishing.join(PATIENCE + MLFLOW_CALL_BOUND)
    if finished and finished[0]:
        draw_later(uploader, commands, script_gone=True)  # drawn before this process exits


# How long one MLflow call can take to fail, with MLFLOW_HTTP_REQUEST_TIMEOUT's default
# (120 s) and the two tries of the client that serve() asks for.
MLFLOW_CALL_BOUND = 3 * 120.0


# The SQLite stores this process has used, as they were (see spare.stale).
_sqlite_files: dict[str, tuple[int, int]] = {}


def _options(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m pypads.to_mlflow.uploader", description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the run's journal")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between two uploads")
    parser.add_argument("--recover", action="store_true", help="also upload journals left behind")
    parser.add_argument("--script", help="the script's sys.argv[0], which MLflow tags the run with")
    parser.add_argument("--idle", type=float, default=0.0, help="seconds to wait as a spare for the next run")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> NoReturn:
    options = _options(argv)
    # The stderr this process shares is the script's: a library's warning about pypads'
    # own computations (scikit-learn's about float32 probabilities in a training score)
    # is nothing the script caused. What a user must hear reaches them as pypads' warnings.
    warnings.simplefilter("ignore")
    warnings.filterwarnings("default", message="pypads")  # but its own (an unreadable journal left as it is)
    # Our answers go to the stdout we were given; anything printed by MLflow goes to stderr.
    answers_to = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    commands_from: BinaryIO = sys.stdin.buffer
    for _ in range(MOST_RUNS):
        # Signals that end the script's whole job (Slurm, systemd) must not end this
        # process first: the script ends the run, and end of input tells this process it is gone.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if options.script is not None:
            # MLflow tags a new run from sys.argv[0] (source name, git commit): the script's.
            sys.argv[0] = options.script
        if not serve(options.folder, options.interval, options.recover, commands_from, answers_to):
            break
        if options.idle <= 0:
            break
        # Waiting as a spare: a shutdown's SIGTERM ends it like any idle process.
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        claim = wait_for_claim(options.idle, _sqlite_files)
        if claim is None:
            break
        try:
            options = _options(claim.argv)
        except SystemExit:  # arguments this pypads does not know: not a claim it can serve
            release(claim)
            break
        with _output_lock:
            take_over(claim)
        commands_from, answers_to = claim.connection.makefile("rb"), claim.connection.makefile("wb")
        claim.connection.close()  # the files keep the socket open
    pictures_drawn()
    # Nothing is left to do, and MLflow's interpreter teardown takes a while: skip it,
    # the script may be waiting for this process to end.
    os._exit(0)
