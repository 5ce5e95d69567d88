"""The unit tier (``python3 dev.py unit``): pypads' parts tested in this process, without
MLflow and without another process; each test is held to that (:func:`in_this_process_only`).
A logger writes to its run's writer; here that is a :class:`RecordingWriter` that keeps
what it was given, so each test reads what a logger would have sent to MLflow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any, BinaryIO

import pytest

from pypads.core.call import Call
from pypads.run.context import RunContext


@pytest.fixture(scope="session", autouse=True)
def fonts_listed() -> None:
    """matplotlib lists the machine's fonts (``fc-list``, a process) the first time it is
    imported under a home without its cache (``~/.cache/matplotlib``): its own one-time
    set-up, not something a picture does, so it is done before the guard below. Without
    this, the drawing tests fail on the first run on a new machine and pass on the next."""
    import matplotlib.font_manager  # noqa: F401


@pytest.fixture(autouse=True)
def in_this_process_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A unit test starts no process and imports no MLflow: what does belongs to the stage
    tier (tests/stage), which runs a stage against its real neighbours."""
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a unit test starts no process: move it to tests/stage")

    monkeypatch.setattr(subprocess, "Popen", refused)
    monkeypatch.setattr(os, "fork", refused)
    had_mlflow = "mlflow" in sys.modules  # imported by an earlier tier in this session
    yield
    assert had_mlflow or "mlflow" not in sys.modules, "a unit test imports no MLflow: move it to tests/stage"


class RecordingWriter:
    """Everything a logger can write, kept in memory (the writer's methods loggers use)."""

    def __init__(self) -> None:
        self.params: dict[str, str] = {}
        self.metrics: dict[str, list[tuple[int, float]]] = {}
        self.tags: dict[str, str] = {}
        self.files: dict[str, bytes] = {}
        self.entries: list[dict[str, Any]] = []
        self.contents: list[bytes | None] = []
        self.run_id = "0" * 32
        self.is_open = True

    def log_params(self, params: Mapping[str, str]) -> None:
        self.params.update(params)

    def log_metric(self, key: str, value: float, step: int = 0, timestamp: int | None = None) -> None:
        self.metrics.setdefault(key, []).append((step, value))

    def log_metrics(self, metrics: Mapping[str, float], step: int = 0) -> None:
        for key, value in metrics.items():
            self.log_metric(key, value, step)

    def set_tag(self, key: str, value: str) -> None:
        self.tags[key] = value

    def set_tags(self, tags: Mapping[str, str]) -> None:
        self.tags.update(tags)

    def log_bytes(self, path: str, content: bytes) -> None:
        self.files[path] = content

    def append_bytes(self, path: str, content: bytes) -> None:
        self.files[path] = self.files.get(path, b"") + content

    def log_text(self, path: str, text: str) -> None:
        self.files[path] = text.encode()

    def log_entry(self, entry: Mapping[str, Any], content: bytes | None = None) -> None:
        json.dumps(entry)  # an entry must travel as a JSON line
        self.entries.append(dict(entry))
        self.contents.append(content)

    def log_file(self, path: str, write: Callable[[BinaryIO], None]) -> None:
        raise AssertionError("not expected in these tests")

    def lines(self, path: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.files[path].decode().splitlines()]


@pytest.fixture
def run() -> RunContext:
    return RunContext(RecordingWriter())  # type: ignore[arg-type]


def call_of(run: RunContext, function: Callable[..., Any], *args: Any, name: str, hooks: set[str],
            instance: Any = None, depth: int = 0, parent: Call | None = None, **kwargs: Any) -> Call:
    """Run ``function`` as a tracked call would, and return the call loggers receive."""
    order, number = run.next_call(name)
    call = Call(function, name, instance, type(instance) if instance is not None else None, args, kwargs,
                frozenset(hooks), run, order, number, depth, parent)
    call.result = function(*args, **kwargs)
    return call


def logged(logger: Any, call: Call) -> Call:
    """Run ``logger``'s two phases around an already finished ``call``."""
    before = logger.pre(call, logger.options)
    logger.post(call, before, logger.options)
    return call
