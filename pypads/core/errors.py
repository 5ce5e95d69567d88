"""The errors and warnings pypads raises, in one place so that users can catch them."""

from __future__ import annotations

import sys
import warnings


class PyPadsError(Exception):
    """Base class of every error raised by pypads itself (never by the tracked code)."""


class MappingError(PyPadsError):
    """A mapping file is malformed: it names the file, the JSON path and what is wrong."""

    def __init__(self, source: str, json_path: str, problem: str) -> None:
        self.source = source
        self.json_path = json_path
        self.problem = problem
        super().__init__(f"{source}: at {json_path}: {problem}")


class ConfigError(PyPadsError):
    """The ``config``, ``logging_fns`` or another argument of ``PyPads()`` is invalid."""


class LoggerFailure(PyPadsError):
    """Raised instead of a warning when a logger fails in strict mode (``PYPADS_STRICT=1``)."""


class CallMonitorError(PyPadsError):
    """A call database cannot be loaded, a record in it is malformed or unsafe (the message
    names the file and the record), a call asked for does not exist, or a replay is
    refused (and the message says what would allow it)."""


class ResultsError(PyPadsError):
    """A run, an experiment or a part of a run asked for (``pypads.results``) is not in the store."""


class RecordingWarning(UserWarning):
    """A call could not be recorded into the call database; the call itself was not affected."""


class MappingWarning(UserWarning):
    """A mapping file names something that is not there, or serves another version of
    its library: that part of it tracks nothing."""


class LoggerWarning(UserWarning):
    """A logger failed; the tracked call went on unharmed. Issued once per logger and run."""


# What a failing logger may raise that still ends the program as it would untracked:
# Ctrl-C, sys.exit() and a generator being closed. Every other BaseException (pytest's
# fail/skip outcomes, asyncio.CancelledError, gevent's and trio's timeouts) is the
# logger's trouble, not the script's: caught, warned about and tagged like an Exception.
PASSES_THROUGH_LOGGERS: tuple[type[BaseException], ...] = (KeyboardInterrupt, SystemExit, GeneratorExit)


def warn(message: str, category: type[Warning] = UserWarning, stacklevel: int = 2) -> None:
    """Issue a pypads warning that can never raise into the user's code.

    A user who made warnings errors (``-W error``, ``warnings.simplefilter("error")``,
    pytest's ``filterwarnings = error``) asked for *their* program's warnings to fail
    it; pypads' own trouble must not change how their program runs. Where the filters
    turn the warning into an exception, the message goes to stderr instead, and if
    even that fails (a closed stderr) it is dropped.
    """
    try:
        warnings.warn(message, category, stacklevel=stacklevel + 1)
    except Exception:
        say_on_stderr(f"{category.__name__}: {message}")


def say_on_stderr(message: str) -> None:
    """Print one line on the process' stderr; never raises (a closed stderr drops it).

    For what must be said whatever the user's warning filters are."""
    try:
        print(message, file=sys.stderr or sys.__stderr__, flush=True)
    except Exception:  # noqa: S110 - nowhere left to report to
        pass
