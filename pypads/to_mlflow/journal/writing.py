"""The script's side of a journal: everything a run logs is on local disk, appended to
files kept open (entity lines copied into a memory map of theirs, see
:mod:`pypads.to_mlflow.journal.appending`), before the call that logged it returns (see
:mod:`pypads.to_mlflow.journal.format`)."""

from __future__ import annotations

import json
import math
import os
import shutil
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import psutil

from pypads.to_mlflow.journal.appending import Appender, open_appender
from pypads.to_mlflow.journal.format import (
    ARTIFACTS,
    ENTRIES,
    ENTRY_KINDS,
    INLINE_LIMIT,
    PRIVATE_FILE,
    PRIVATE_FOLDER,
    RESERVE_BYTES,
    STATUS,
    JournalFolder,
    artifact_file_line,
    artifact_line,
    create_private,
    entity_line,
    journal_root,
    staging_name,
    stays_inside,
    write_atomically,
    write_then_name,
)
from pypads.to_mlflow.store import RunTarget

Created = TypeVar("Created", bound="JournalWriter")


class JournalWriter(JournalFolder):
    """Appends a run's params, metrics, tags, artifacts and entries to its journal."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self._descriptors: dict[Path, int] = {}
        self._descriptor_pid = 0
        self._lines: Appender | None = None  # entities.jsonl, opened at the first line
        self._metric_starts: dict[str, str] = {}  # a metric's line up to its value, per name
        # The last value written and its text: a score in a loop often repeats (an accuracy
        # on the same test set takes few values), and its repr is the dearest part of a line.
        self._last_number: tuple[float, str] = (0.0, "0.0")
        self._created: dict[str, Any] = {}  # the meta it was created with

    @classmethod
    def create(cls: type[Created], target: RunTarget, root: Path | None = None) -> Created:
        """A new journal for ``target`` under ``root`` (by default :func:`journal_root`)."""
        base = root or journal_root()
        base.mkdir(PRIVATE_FOLDER, parents=True, exist_ok=True)
        name = uuid.uuid4().hex
        # Made complete under a name of its own, then renamed into place: a process killed
        # halfway (a SIGTERM during PyPads()) leaves a staging folder that names it, which
        # left_behind() removes, never a journal without its meta that no one can recover.
        staging = base / staging_name(name, os.getpid())
        staging.mkdir(PRIVATE_FOLDER)
        (staging / ARTIFACTS).mkdir(PRIVATE_FOLDER)
        journal = cls(staging)
        journal._created = {
            "run_id": target.join_run_id, "owns_run": target.join_run_id is None,
            "tracking_uri": target.store.tracking_uri, "experiment": target.experiment_name,
            "artifact_root": str(target.store.artifact_root) if target.store.artifact_root else None,
            "pid": os.getpid(), "started": psutil.Process().create_time(),
            # The run opens later, off the script's thread: MLflow gets this as its start.
            "start_time": int(time.time() * 1000),
            "user": target.user,
            "mpi": list(target.mpi) if target.mpi else None,
        }
        journal._write_meta(journal._created)
        with create_private(journal._reserve, PRIVATE_FILE) as reserve:
            reserve.write(bytes(RESERVE_BYTES))
        os.rename(staging, base / name)
        created = cls(base / name)
        created._created = journal._created
        return created

    def set_status(self, status: str) -> None:
        """The status the run ends with, should the journal outlive this process."""
        write_atomically(self.folder / STATUS, status.encode(), PRIVATE_FILE)

    def reopen(self, run_id: str | None) -> bool:
        """Make the journal again if its uploader deleted it, for a write that comes
        late into run ``run_id`` (joined: the run has ended already). False if it was
        still there (the end did not reach MLflow: it waits for a later recovery)."""
        self.close()
        if self.exists():
            return False
        self.folder.mkdir(PRIVATE_FOLDER, parents=True, exist_ok=True)
        self.artifacts.mkdir(PRIVATE_FOLDER, exist_ok=True)
        self._write_meta({**self._created, "run_id": run_id, "owns_run": False})
        return True

    def record(self, entry: dict[str, Any]) -> None:
        """Append one entity line."""
        data = entity_line(entry)
        with self._lock:
            self._append_line(data)

    def record_metric(self, key: str, value: float, timestamp: int, step: int) -> None:
        """:meth:`record` of one metric, the line formatted directly: a scoring function
        called in a loop pays for this on every call, and ``json.dumps`` of a dict costs
        several times more. The line is the one ``json.dumps`` would write."""
        start = self._metric_starts.get(key)
        if start is None:
            start = f'{{"kind": "metric", "key": {json.dumps(key)}, "value": '
            if len(self._metric_starts) < 1024:  # metric names repeat; a name per step would not
                self._metric_starts[key] = start
        last_value, number = self._last_number
        # Equal and not zero: the very same float (0.0 equals -0.0, which reads otherwise;
        # NaN equals nothing). float.__repr__ is what json writes for a finite float; NaN
        # and infinities it spells its own way.
        if value != last_value or value == 0.0:
            number = float.__repr__(value) if math.isfinite(value) else json.dumps(value)
            self._last_number = (value, number)
        data = f'{start}{number}, "timestamp": {timestamp}, "step": {step}}}\n'.encode()
        with self._lock:  # _append_line, written out: one Python call less on every metric
            (self._lines or self._open_lines()).append(data)

    def stage(self, path: str, content: bytes, append: bool = False) -> None:
        """Keep an artifact (or, with ``append``, a piece to add to its end) until it is
        uploaded. A large one gets a file of its own (see :meth:`stage_file`). A path
        that leaves the run's artifacts (absolute, or with ``..``) is a ValueError."""
        _check_inside(path)
        if len(content) > INLINE_LIMIT and not append:
            self.stage_file(path, lambda stream: stream.write(content))
            return
        with self._lock:
            self._append(self._data, content)
            at = os.lseek(self._descriptors[self._data], 0, os.SEEK_CUR) - len(content)
            self._append_line(artifact_line(path, append, at, len(content)))

    def stage_file(self, path: str, write: Callable[[BinaryIO], Any]) -> None:
        """Keep the artifact that ``write`` writes into the file it is given: large
        content goes to disk once, straight from where it is."""
        _check_inside(path)
        target = self.artifacts / path
        target.parent.mkdir(PRIVATE_FOLDER, parents=True, exist_ok=True)
        write_atomically(target, write, PRIVATE_FILE)
        self._record_file(path)

    def stage_named_file(self, folder: str, write: Callable[[BinaryIO], str]) -> str:
        """Like :meth:`stage_file` for an artifact in ``folder`` whose name ``write``
        returns once it has written it (a name made from the content); returns the
        artifact's path."""
        directory = self.artifacts / folder
        directory.mkdir(PRIVATE_FOLDER, parents=True, exist_ok=True)
        path = f"{folder}/{write_then_name(directory, write, PRIVATE_FILE)}"
        self._record_file(path)
        return path

    def record_entry(self, entry: dict[str, Any], content: bytes | None = None) -> None:
        """Append an entry of one of :data:`ENTRY_KINDS`, with ``content`` (a pickled
        model) kept beside it the way an artifact's bytes are: appended to the data
        file, or, if large, a file of its own under ``entries/``."""
        if entry.get("kind") not in ENTRY_KINDS:
            raise ValueError(f"not a journal entry kind: {entry.get('kind')!r}")
        if content is not None and len(content) > INLINE_LIMIT:
            name = uuid.uuid4().hex
            (self.folder / ENTRIES).mkdir(PRIVATE_FOLDER, exist_ok=True)
            write_atomically(self.folder / ENTRIES / name, content, PRIVATE_FILE)
            self.record({**entry, "file": name})
            return
        with self._lock:
            if content is not None:
                self._append(self._data, content)
                at = os.lseek(self._descriptors[self._data], 0, os.SEEK_CUR) - len(content)
                entry = {**entry, "at": at, "size": len(content)}
            self._append_line(entity_line(entry))

    def _record_file(self, path: str) -> None:
        with self._lock:
            self._append_line(artifact_file_line(path))

    def _append_line(self, data: bytes) -> None:
        (self._lines or self._open_lines()).append(data)

    def _open_lines(self) -> Appender:
        self._lines = open_appender(self._entities, PRIVATE_FILE)
        return self._lines

    def _append(self, path: Path, data: bytes) -> None:
        # Files are opened once for the journal's life: opening and closing one per
        # metric cost more than all the rest of a hot metric call.
        if self._descriptor_pid != os.getpid():
            self._descriptors, self._descriptor_pid = {}, os.getpid()  # a forked child's own
        descriptor = self._descriptors.get(path)
        if descriptor is None:
            descriptor = self._descriptors[path] = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE)
        written = os.write(descriptor, data)
        if written < len(data):  # a signal can cut a write short: write the rest
            view = memoryview(data)[written:]
            while view:
                view = view[os.write(descriptor, view):]

    def close(self) -> None:
        """Close the files kept open for appending (a later append opens them again)."""
        with self._lock:
            if self._descriptor_pid == os.getpid():
                for descriptor in self._descriptors.values():
                    os.close(descriptor)
            self._descriptors = {}
            lines, self._lines = self._lines, None
            if lines is not None:
                lines.close()

    def discard(self) -> None:
        """Delete the journal (all of it is in MLflow)."""
        self.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _check_inside(path: str) -> None:
    if not stays_inside(path):
        raise ValueError(f"the artifact path {path!r} leaves the run's artifacts (absolute, or with '..')")
