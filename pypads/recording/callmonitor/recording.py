"""Recording calls: the ``@intercept`` decorator, ``CONTEXT`` and the ``CallRecorder`` logger."""

from __future__ import annotations

import atexit
import functools
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from pypads.core import Logger, RecordingWarning, inside_pypads, pypads_at_work, tracked_run, warn
from pypads.recording.callmonitor.database import FolderSink, RunSink, Sink
from pypads.recording.callmonitor.handlers import REGISTRY
from pypads.recording.callmonitor.records import Encoded, RecordEncoder
from pypads.run import RunContext, TrackedCall

F = TypeVar("F", bound=Callable[..., Any])


class Context:
    """The database calls are recorded into: the active pypads run's artifacts, else a
    local folder created at the first recorded call (its absolute path is fixed then:
    a later ``os.chdir`` changes nothing)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._folder: FolderSink | None = None
        self._base: Path | None = None
        self._runs: dict[int, RunSink] = {}
        self._pid = os.getpid()
        self._folder_pid = self._pid
        self._warned: set[str] = set()

    def new(self) -> None:
        """Start a new local database at the next recorded call (re-reading Settings)."""
        with self._lock:
            self._folder = None

    @property
    def folder(self) -> Path | None:
        """The local database folder, once created."""
        return self._folder.root if self._folder is not None else None

    def sink(self) -> Sink:
        run = tracked_run()
        if isinstance(run, RunContext):  # the core knows the run only by what it asks of it
            return self.run_sink(run)
        with self._lock:
            if self._folder is None or os.getpid() != self._folder_pid:
                if self._base is None:
                    self._base = Path.cwd().resolve()
                self._folder = FolderSink.create(self._base, self._pid)
                self._folder_pid = os.getpid()
                atexit.register(_accumulators_done)
            return self._folder

    def run_sink(self, run: RunContext) -> RunSink:
        with self._lock:
            sink = self._runs.get(id(run))
            if sink is None or sink.run is not run:
                sink = self._runs[id(run)] = RunSink(run)
            return sink

    def warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warn(message, RecordingWarning, stacklevel=4)


CONTEXT = Context()


def _accumulators_done() -> None:
    for handler in REGISTRY.handler_classes():
        try:
            handler.accumulator_done()
        except Exception as error:  # a user's handler must not spoil the exit
            warn(f"{handler.__qualname__}.accumulator_done failed: {error!r}", RecordingWarning, stacklevel=1)


def qualified_name(function: Callable[..., Any]) -> str:
    return f"{function.__module__}.{function.__qualname__}"


def begin(sink: Sink, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Encoded | None:
    try:
        return RecordEncoder(REGISTRY, sink.store_array).call(sink.next_number(name), args, kwargs)
    except Exception as error:
        CONTEXT.warn_once(name, f"callmonitor could not record a call of {name}: {error!r}")
        return None


def finish(sink: Sink, name: str, function: Callable[..., Any], encoded: Encoded | None,
           result: Any, error: BaseException | None, duration: float) -> None:
    if encoded is None:
        return
    try:
        RecordEncoder(REGISTRY, sink.store_array).outcome(encoded, result, error, duration)
        sink.write(name, function, encoded)
    except Exception as failure:
        CONTEXT.warn_once(name, f"callmonitor could not record a call of {name}: {failure!r}")


def intercept(function: F) -> F:
    """Record every call of ``function``: its arguments (by position and keyword), its
    result or exception and its duration. The function runs exactly once; a failure to
    record is one warning, never an error."""
    name = qualified_name(function)

    @functools.wraps(function)
    def recorded(*args: Any, **kwargs: Any) -> Any:
        if inside_pypads():  # called by pypads, or by a signal handler that interrupted it
            return function(*args, **kwargs)
        with pypads_at_work():
            sink = CONTEXT.sink()
            encoded = begin(sink, name, args, kwargs)
        started = time.perf_counter()
        try:
            result = function(*args, **kwargs)
        except BaseException as error:
            with pypads_at_work():
                finish(sink, name, function, encoded, None, error, time.perf_counter() - started)
            raise
        with pypads_at_work():
            finish(sink, name, function, encoded, result, None, time.perf_counter() - started)
        return result

    return recorded  # type: ignore[return-value]


class CallRecorder(Logger):
    """A logger that records each call it sees into the run's call database
    (``callmonitor/`` in the run's artifacts), to be loaded with
    ``pypads.recording.callmonitor.load(run_id)`` and replayed. Methods are recorded with their
    instance as the first argument, as it was before the call."""

    def pre(self, call: TrackedCall, options: Mapping[str, Any]) -> tuple[RunSink, str, Encoded | None]:
        sink = CONTEXT.run_sink(call.run)
        owner = type(call.instance) if call.instance is not None else call.function
        name = f"{owner.__module__}.{call.name}"
        return sink, name, begin(sink, name, call.args, call.kwargs)

    def post(self, call: TrackedCall, before: tuple[RunSink, str, Encoded | None], options: Mapping[str, Any]) -> None:
        sink, name, encoded = before
        finish(sink, name, call.function, encoded, call.result, call.exception, call.duration or 0.0)
