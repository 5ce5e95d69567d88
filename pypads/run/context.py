"""The tracked run as loggers see it: its id, the writer, counters and per-logger state."""

from __future__ import annotations

import itertools
import os
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

from pypads.core import PASSES_THROUGH_LOGGERS, Call, LoggerFailure, LoggerWarning, MappingFile, warn
from pypads.run.writer import Writer

STRICT_ENV = "PYPADS_STRICT"


def strict_mode() -> bool:
    """Whether logger errors are raised instead of warned about (for tests)."""
    return os.environ.get(STRICT_ENV, "").lower() in {"1", "true", "yes", "on"}


class RunContext:
    """Everything about one MLflow run that the call machinery and the loggers share.

    It lives exactly as long as the run: a new run gets fresh counters and state, so
    loggers themselves stay stateless and can be shared between runs.
    """

    def __init__(self, writer: Writer, mappings: tuple[MappingFile, ...] = ()) -> None:
        self.writer = writer
        self.mappings = mappings  # for the provenance of what loggers write
        self._order = itertools.count(1)
        self._numbers: defaultdict[str, Iterator[int]] = defaultdict(lambda: itertools.count(1))
        self._states: dict[int, dict[str, Any]] = {}
        self._failed_loggers: set[str] = set()
        self._lock = threading.Lock()
        self._end_callbacks: list[Callable[[], None]] = []

    @property
    def run_id(self) -> str | None:
        """The MLflow run id; waits until the writer has opened the run (``None`` if it
        could not: the data then waits in the journal for the next ``PyPads()``)."""
        return self.writer.run_id

    def on_end(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` when the run ends, before its last flush (to write what a
        logger buffered)."""
        with self._lock:
            self._end_callbacks.append(callback)

    def ending(self) -> None:
        """Called by the tracker as the run ends."""
        with self._lock:
            callbacks, self._end_callbacks = self._end_callbacks, []
        for callback in callbacks:
            self.call_safely(getattr(callback, "__qualname__", "end callback"), "run end", callback)

    def call_safely(self, logger_name: str, where: str, function: Callable[[], Any]) -> None:
        """Call ``function`` for the logger ``logger_name``: a failure is reported
        (:meth:`logger_failed`), never raised into the script."""
        try:
            function()
        except PASSES_THROUGH_LOGGERS:
            raise
        except BaseException as error:
            self.logger_failed(logger_name, where, error)

    def next_call(self, name: str) -> tuple[int, int]:
        """The run-wide order of a new call and its number among calls of ``name`` (both from 1)."""
        numbers = self._numbers.get(name)
        if numbers is None:
            with self._lock:
                numbers = self._numbers[name]
        return next(self._order), next(numbers)  # each next() is atomic: no lock on every call's path

    def state(self, owner: object) -> dict[str, Any]:
        """A dict private to ``owner`` (usually a logger) for the lifetime of this run."""
        found = self._states.get(id(owner))  # atomic: no lock once it exists
        if found is None:
            with self._lock:
                found = self._states.setdefault(id(owner), {})
        return found

    def logger_failed(self, logger_name: str, where: str, error: BaseException) -> None:
        """Report a failing logger: one warning and one tag per logger, or raise in strict mode."""
        if strict_mode():
            raise LoggerFailure(f"logger {logger_name} failed in {where}: {error!r}") from error
        with self._lock:
            if logger_name in self._failed_loggers:
                return
            self._failed_loggers.add(logger_name)
        message = f"{type(error).__name__}: {error}"
        warn(f"pypads logger {logger_name} failed in {where} ({message}); the tracked code was not affected",
             LoggerWarning, stacklevel=2)
        try:
            self.writer.set_tag(f"pypads.failure.{logger_name}", f"{where}: {message}"[:5000])
        except Exception:  # noqa: S110 - the journal itself failed (a full disk): the writer has said so
            pass


TrackedCall = Call[RunContext]
"""A tracked call as the loggers receive it: carrying the run it is tracked into."""
