"""How a tracked run ends when the program does.

* Normal interpreter exit: FINISHED (``atexit``).
* An uncaught exception: FAILED, with the traceback handed over for an artifact;
  ``KeyboardInterrupt`` (Ctrl-C): KILLED. The previous ``sys.excepthook`` still runs,
  so the user sees the same traceback and the same exit code.
* SIGTERM: KILLED, then the previous disposition runs; with the default one the
  signal is raised again, so the process dies of SIGTERM exactly as without pypads.

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
import warnings
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any

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

    def install(self) -> None:
        if self._installed:
            return
        self._installed = True
        atexit.register(self._at_exit)
        self._previous_excepthook = sys.excepthook
        sys.excepthook = self._excepthook
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGTERM)
            if previous is not signal.SIG_IGN:
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
            warnings.warn(f"pypads could not end the run ({status}): {error!r}", stacklevel=2)

    def _at_exit(self) -> None:
        if self._ours():
            self._end(FINISHED, None)

    def _excepthook(self, kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
        previous = self._previous_excepthook or sys.__excepthook__
        previous(kind, error, tb)
        if self._ours():
            status = KILLED if issubclass(kind, KeyboardInterrupt) else FAILED
            self._end(status, "".join(traceback.format_exception(kind, error, tb)))
            if issubclass(kind, KeyboardInterrupt):
                _mark_unhandled_keyboard_interrupt()

    def _on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        previous = self._previous_sigterm
        if self._ours():
            self._end(KILLED, None)
        self.uninstall()
        if callable(previous):
            previous(signum, frame)
        else:  # SIG_DFL (or None: set from C): die of the signal, as without pypads
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.raise_signal(signal.SIGTERM)


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
