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
import contextlib
import os
import queue
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, NoReturn

from pypads.to_mlflow import evaluation
from pypads.to_mlflow.timeouts import LOCAL_TIMEOUT, AnswerClock, default_timeout, recovery_timeout
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
        super().__init__()
        self._channel = channel

    def started(self) -> None:
        super().started()
        self._channel.send(ClockReading(busy=True))

    def answered(self) -> None:
        super().answered()
        self._channel.send(ClockReading(busy=False))


def _read_commands(stream: BinaryIO, commands: queue.Queue[Command | None], channel: _Channel,
                   let_go: Callable[[], None]) -> None:
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
        let_go()
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
    True if this process may serve another run; False if an MLflow call was left hanging."""
    # MLflow prints a link to every run it ends on a server ("View run … at:"), runs the
    # script never started itself (a search's candidates): into the script's stderr,
    # which this process shares. Set for each run: a spare takes over the next script's environment.
    os.environ["MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT"] = "true"
    with _script_waits():  # until its run is open: a script importing MLflow waits for it
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
    threading.Thread(target=_read_commands, args=(commands_from, commands, channel, let_go), name="pypads-commands",
                     daemon=True).start()
    uploader.open()
    channel.send(Opened(uploader.run_id))
    _drawing_may_go.set()
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
    _drawing_may_go.clear()  # the script waits for its run's end
    finished: list[bool] = []
    finishing = threading.Thread(target=lambda: finished.append(uploader.end(status)), daemon=True)
    finishing.start()
    if not clock.wait(lambda: not finishing.is_alive(), timeout):
        channel.send(Closed(False))
        return False  # a store that does not answer: the journal stays for a later PyPads()
    channel.send(Closed(bool(finished and finished[0])))
    _drawing_may_go.set()
    with _output_lock:
        _let_go_of_the_scripts_output()
        served.set()
    try:
        answers_to.close()  # the script's reader sees the end of its answers
    except (OSError, ValueError):
        pass  # what was left unsent is for a script that is gone; this process serves on
    if finished and finished[0]:  # the pictures: the script need not wait for them
        wait = 0.0 if command is None else SCRIPT_EXIT_WAIT  # None: its input has ended, it is gone
        drawing = threading.Thread(target=_draw_pictures, args=(uploader, commands, wait), name="pypads-pictures")
        drawing.start()
        _drawing[:] = [*filter(threading.Thread.is_alive, _drawing), drawing]
    if recovery is not None:  # the script need not wait for other runs' journals
        recovery.wait(recovery_timeout(timeout))
    identity = sqlite_identity(uploader.target.store.tracking_uri)
    if identity is not None:
        _sqlite_files[identity[0]] = identity[1]
    return True


# Seconds the pictures wait for the script to exit once its run has ended: on a machine
# of two cores, drawing them at once would slow down the interpreter's own teardown.
SCRIPT_EXIT_WAIT = 2.0


# The threads that draw the pictures of runs served, while this process waits as a spare
# or serves the next run: a script that comes right after one that ended need neither
# start an uploader of its own nor wait for the pictures of the run before its own.
_drawing: list[threading.Thread] = []
_one_drawing = threading.Lock()  # one run's pictures at a time (and one matplotlib user)

# Cleared while a script waits for this process (its run being opened, or ended): the
# pictures of an earlier run then pause between two models' or datasets' pictures, a few
# hundred milliseconds of drawing at most, so that they never lengthen a script's wait.
_drawing_may_go = threading.Event()
_drawing_may_go.set()
# The longest one pause lasts; past it the pictures are drawn all the same. A script's
# wait is bounded per unanswered MLflow call (pypads.to_mlflow.timeouts), not in total,
# so this is a bound of its own: twice the local store's bound for one call.
MOST_PAUSE = 2 * LOCAL_TIMEOUT


@contextlib.contextmanager
def _script_waits() -> Iterator[None]:
    _drawing_may_go.clear()
    try:
        yield
    finally:
        _drawing_may_go.set()


def _draw_pictures(uploader: Uploader, commands: queue.Queue[Command | None], wait: float) -> None:
    _until_the_script_exits(commands, wait)
    with _one_drawing:
        uploader.send_pictures(between=lambda: _drawing_may_go.wait(MOST_PAUSE))


def _pictures_drawn() -> None:
    """Wait for the pictures of the runs served so far, before this process exits."""
    while _drawing:
        _drawing.pop().join()


def _until_the_script_exits(commands: queue.Queue[Command | None], timeout: float) -> None:
    """Wait until the script's end of input (its exit), at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            if commands.get(timeout=left) is None:
                return
        except queue.Empty:
            return


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
    _pictures_drawn()
    # Nothing is left to do, and MLflow's interpreter teardown takes a while: skip it,
    # the script may be waiting for this process to end.
    os._exit(0)
