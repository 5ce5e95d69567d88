"""How a tracked run ends when the program does.

* Normal interpreter exit: FINISHED (``atexit``).
* An uncaught exception: FAILED, with the traceback handed over for an artifact;
  ``KeyboardInterrupt`` (Ctrl-C): KILLED. The previous ``sys.excepthook`` still runs,
  so the user sees the same traceback and the same exit code.
* SIGTERM: pypads installs no handler of its own. A signal handler runs between two
  bytecodes of whatever the main thread was doing, pypads' own code included, so any
  work it did could wait for a lock that the interrupted code holds, forever; a Python
  handler also delays the signal until a long native call returns, and is inherited by
  forked workers (``multiprocessing.Pool.terminate`` then hangs). With the default
  disposition the process dies of SIGTERM at once, exactly as untracked, and the
  uploader process, whose input then ends, ends the run KILLED. Where the script
  installed a SIGTERM handler of its own before ``PyPads()``, that handler is kept and
  only a flag is set in front of it, so a run it then ends by exiting is KILLED.

Only the process that installed the hooks acts on them: a forked child that exits
does not end its parent's run.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any

from pypads.core import warn

FINISHED, FAILED, KILLED = "FINISHED", "FAILED", "KILLED"

EndRun = Callable[[str, str | None], None]
"""Called with the final status and, after an exception, its formatted traceback."""


class ExitHooks:
    def __init__(self, end_run: EndRun) -> None:
        self._end_run = end_run
        self._pid = os.getpid()
        self._previous_excepthook: Callable[..., Any] | None = None
        self._previous_sigterm: Any = None
        self._installed = False
        self._terminated = False  # a SIGTERM reached the script's own handler

    def install(self) -> None:
        if self._installed:
            return
        self._installed = True
        atexit.register(self._at_exit)
        self._previous_excepthook = sys.excepthook
        sys.excepthook = self._excepthook
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGTERM)
            if callable(previous):  # the script's own handler; the default one is left alone
                self._previous_sigterm = previous
                signal.signal(signal.SIGTERM, self._on_sigterm)

    def uninstall(self) -> None:
        if not self._installed:
            return
        self._installed = False
        atexit.unregister(self._at_exit)
        if sys.excepthook == self._excepthook:
            sys.excepthook = self._previous_excepthook or sys.__excepthook__
        if self._previous_sigterm is not None and threading.current_thread() is threading.main_thread():
            if signal.getsignal(signal.SIGTERM) == self._on_sigterm:
                signal.signal(signal.SIGTERM, self._previous_sigterm)
            self._previous_sigterm = None

    def _ours(self) -> bool:
        return self._installed and os.getpid() == self._pid

    def _end(self, status: str, failure: str | None) -> None:
        # Whatever goes wrong here must not change how the program exits.
        try:
            self._end_run(status, failure)
        except Exception as error:
            warn(f"pypads could not end the run ({status}): {error!r}")

    def _at_exit(self) -> None:
        if self._ours():
            self._end(KILLED if self._terminated else FINISHED, None)

    def _excepthook(self, kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
        previous = self._previous_excepthook or sys.__excepthook__
        previous(kind, error, tb)
        if self._ours():
            status = KILLED if issubclass(kind, KeyboardInterrupt) or self._terminated else FAILED
            self._end(status, "".join(traceback.format_exception(kind, error, tb)))
            if issubclass(kind, KeyboardInterrupt):
                _mark_unhandled_keyboard_interrupt()

    def _on_sigterm(self, signum: int, frame: FrameType | None) -> Any:
        # Only a flag: this runs wherever the main thread was interrupted (see the module's doc).
        self._terminated = True
        previous = self._previous_sigterm
        if callable(previous):
            return previous(signum, frame)
        # Uninstalled from another thread meanwhile: behave as the default disposition.
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.raise_signal(signal.SIGTERM)
        return None


def _mark_unhandled_keyboard_interrupt() -> None:
    """Make the interpreter exit by SIGINT again, as it does for an uncaught Ctrl-C.

    CPython remembers an uncaught KeyboardInterrupt in a flag that decides, after
    finalisation, to die of SIGINT (exit status -2/130). Running code through its
    ``PyRun_*`` API clears that flag, and ending a run can do so indirectly (some
    libraries' imports do). Raising KeyboardInterrupt once more through that same API,
    with the excepthook silenced, sets the flag back.
    """
    previous = sys.excepthook
    sys.excepthook = lambda *args: None
    try:
        ctypes.pythonapi.PyRun_SimpleString(b"raise KeyboardInterrupt")
    finally:
        sys.excepthook = previous
