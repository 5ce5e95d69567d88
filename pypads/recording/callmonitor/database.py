"""Writing call databases: a local folder, or the artifacts of the pypads run.

Local folder (``call-monitor``, then ``call-monitor-1``… — an existing one is never
reused), fixed as an absolute path at first use::

    call-monitor/
        db.json                          format, creation time, process
        objects/<blake3>.npy             each distinct array once (named by the file's BLAKE3 hash)
        <module.qualname>/function.json  argument names, kinds and defaults
        <module.qualname>/calls.jsonl    calls whose values fit in the record, one per line
        <module.qualname>/<n>/           calls with files: record.json, arg_<label>.npy, …

Every write is crash-safe on its own: a line is appended with one ``write`` call and a
folder appears by an atomic rename once complete, so a killed process leaves a database
that loads with every call recorded before the kill (a torn last line is skipped).
Each process writes its own database: a forked or spawned child, an MPI rank or a
thread given an id with :class:`Settings` gets the suffix ``-tid=<N>``.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from pypads.core import is_multiprocessing_child, launcher_rank
from pypads.recording.callmonitor.handlers import REGISTRY
from pypads.recording.callmonitor.records import FORMAT, Encoded, describe_function
from pypads.recording.content import npy
from pypads.recording.provenance import provenance
from pypads.run import RunContext
from pypads.to_mlflow import write_atomically, write_then_name

ROOT_NAME = "call-monitor"
RUN_FOLDER = "callmonitor"
CHUNK = 1000  # inline records per artifact file in a run


class Settings:
    """Process-wide settings, read when a database is created (as in callmonitor:
    change them before the first recorded call, or call ``CONTEXT.new()`` after)."""

    _thread_id: int | None = None

    def enable_multi_threading(self, thread_id: int) -> None:
        """Write to ``call-monitor-tid=<thread_id>``: for workers of one program that
        must not share a database (e.g. ``concurrent.futures`` workers)."""
        Settings._thread_id = int(thread_id)

    def disable_multi_threading(self) -> None:
        Settings._thread_id = None

    @property
    def thread_id(self) -> int | None:
        return Settings._thread_id


def _child_process() -> int | None:
    """This process' pid if it is a child of a recording program (fork or spawn)."""
    return os.getpid() if is_multiprocessing_child() else None


def _suffix(parent_pid: int | None) -> str:
    forked = None if parent_pid in (None, os.getpid()) else os.getpid()
    for worker in (Settings._thread_id, launcher_rank(), forked or _child_process()):
        if worker is not None:
            return f"-tid={worker}"
    return ""


class Sink:
    """Where records of one database go; numbers calls per function and stores each
    distinct array once, thread-safely."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counters: dict[str, itertools.count[int]] = {}
        self._functions: set[str] = set()
        self._objects: set[str] = set()
        self._layouts: set[tuple[Any, ...]] = set()  # shape, dtype and order of the arrays stored

    def store_array(self, array: np.ndarray) -> str:
        """Store ``array`` under ``objects/`` unless its content is there already;
        returns its file name, ``<blake3>.npy``.

        An array whose shape, dtype and order no stored array has cannot repeat one:
        it is written straight away, hashed as it is written. Any other is hashed
        first, so a repeat is never written.
        """
        fortran_order = array.flags.f_contiguous and not array.flags.c_contiguous
        layout = (array.shape, array.dtype.str, fortran_order)
        with self._lock:
            seen = layout in self._layouts
            self._layouts.add(layout)
        if seen:
            name = f"{npy.digest(array)}.npy"
            with self._lock:
                if name in self._objects:
                    return name
            self._write_object(array, name)
        else:
            name = self._write_object(array, None)
        with self._lock:
            self._objects.add(name)
        return name

    def _write_object(self, array: np.ndarray, name: str | None) -> str:
        """Write ``array`` as ``objects/<name>``, or, with no name, as the name of its
        content; returns the name."""
        raise NotImplementedError

    def next_number(self, name: str) -> int:
        with self._lock:
            return next(self._counters.setdefault(name, itertools.count(1)))

    def first_call(self, name: str, prepare: Callable[[], None]) -> None:
        """Run ``prepare`` once per function, before any of its records is written:
        other threads wait for it rather than write into a folder that is not there yet."""
        with self._lock:
            if name not in self._functions:
                prepare()
                self._functions.add(name)

    def write(self, name: str, function: Callable[..., Any], encoded: Encoded) -> None:
        raise NotImplementedError


class FolderSink(Sink):
    """A database in a local folder."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root
        self._append_locks: dict[str, threading.Lock] = {}

    @classmethod
    def create(cls, base: Path, parent_pid: int | None) -> FolderSink:
        stem = f"{ROOT_NAME}{_suffix(parent_pid)}"
        for index in itertools.count():
            root = base / (stem if index == 0 else f"{stem}-{index}")
            try:
                root.mkdir(parents=True)
                break
            except FileExistsError:
                continue
        write_atomically(root / "db.json", json.dumps(
            {"format": FORMAT, "created": time.time(), "pid": os.getpid(), "provenance": provenance("intercept")}).encode())
        return cls(root)

    def write(self, name: str, function: Callable[..., Any], encoded: Encoded) -> None:
        folder = self.root / name

        def prepare() -> None:
            folder.mkdir(exist_ok=True)
            write_atomically(folder / "function.json", json.dumps(describe_function(function, provenance("intercept"))).encode())

        self.first_call(name, prepare)
        if encoded.needs_folder:
            self._write_folder(folder, encoded)
        else:
            self._append(folder / "calls.jsonl", json.dumps(encoded.record) + "\n")

    def _write_object(self, array: np.ndarray, name: str | None) -> str:
        folder = self.root / "objects"
        folder.mkdir(exist_ok=True)
        if name is None:
            return write_then_name(folder, lambda stream: f"{npy.save(array, stream)}.npy")
        write_atomically(folder / name, functools.partial(_save_array, array))
        return name

    def _write_folder(self, folder: Path, encoded: Encoded) -> None:
        staging = Path(tempfile.mkdtemp(prefix=f".{encoded.record['n']}-", dir=folder))
        for file_name, content in encoded.files.items():
            (staging / file_name).write_bytes(content)
        for link, object_name in encoded.record.get("links", {}).items():
            os.link(self.root / "objects" / object_name, staging / link)
        for handler in encoded.handlers:
            handler.save(str(staging))
        (staging / "record.json").write_text(json.dumps(encoded.record))
        staging.rename(folder / str(encoded.record["n"]))

    def _append(self, path: Path, line: str) -> None:
        with self._lock:
            lock = self._append_locks.setdefault(str(path), threading.Lock())
        data = line.encode()
        with lock:
            descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(descriptor, data)
            finally:
                os.close(descriptor)


class RunSink(Sink):
    """A database in the artifacts of a pypads run, written through the run's writer.

    Calls that fit in a record are appended to ``callmonitor/<function>/calls-<k>.jsonl``,
    ``CHUNK`` calls per file.
    """

    def __init__(self, run: RunContext) -> None:
        super().__init__()
        self.run = run
        self._lines: dict[str, int] = {}
        self._header = {"format": FORMAT, "created": time.time(), "pid": os.getpid(),
                        "provenance": provenance("CallRecorder")}
        run.writer.log_bytes(f"{RUN_FOLDER}/db.json", json.dumps(self._header).encode())
        run.on_end(self.flush)

    def write(self, name: str, function: Callable[..., Any], encoded: Encoded) -> None:
        writer = self.run.writer
        origin = provenance("CallRecorder", self.run.mappings, function)
        self.first_call(name, lambda: writer.log_bytes(
            f"{RUN_FOLDER}/{name}/function.json", json.dumps(describe_function(function, origin)).encode()))
        if encoded.needs_folder:
            self._write_folder(f"{RUN_FOLDER}/{name}/{encoded.record['n']}", encoded)
            return
        with self._lock:
            lines = self._lines.get(name, 0)
            self._lines[name] = lines + 1
        chunk = lines // CHUNK + 1
        # Appended to the journal at once: a killed process loses no recorded call.
        writer.append_bytes(f"{RUN_FOLDER}/{name}/calls-{chunk:05d}.jsonl", (json.dumps(encoded.record) + "\n").encode())

    def _write_object(self, array: np.ndarray, name: str | None) -> str:
        folder = f"{RUN_FOLDER}/objects"
        if name is None:
            stored = self.run.writer.log_named_file(folder, lambda stream: f"{npy.save(array, stream)}.npy")
            if stored is None:
                raise OSError(f"the journal could not take {folder}")
            return stored
        self.run.writer.log_file(f"{folder}/{name}", functools.partial(_save_array, array))
        return name

    def _write_folder(self, prefix: str, encoded: Encoded) -> None:
        writer = self.run.writer
        for file_name, content in encoded.files.items():
            writer.log_bytes(f"{prefix}/{file_name}", content)
        if encoded.handlers:
            staging = Path(tempfile.mkdtemp(prefix="pypads-callmonitor-"))
            try:
                for handler in encoded.handlers:
                    handler.save(str(staging))
                for path in sorted(staging.rglob("*")):
                    if path.is_file():
                        writer.log_bytes(f"{prefix}/{path.relative_to(staging).as_posix()}", path.read_bytes())
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        writer.log_bytes(f"{prefix}/record.json", json.dumps(encoded.record).encode())

    def flush(self) -> None:
        for handler in REGISTRY.handler_classes():
            handler.accumulator_done()
        if self.run.writer.is_open:  # the run is opened off the script's thread; never wait for it here
            header = {**self._header, "run_id": self.run.writer.run_id}
            self.run.writer.log_bytes(f"{RUN_FOLDER}/db.json", json.dumps(header).encode())


def _save_array(array: np.ndarray, stream: BinaryIO) -> None:
    npy.save(array, stream)  # its hash, which it returns, is known already
