"""The durable local copy of what a run still owes MLflow.

Params, metrics, tags and artifacts are on local disk before the call that logged
them returns, appended to files kept open. The writer
uploads from here and records how far it got. A process that dies (SIGKILL, power loss
of the machine aside), or that ends while the store does not answer, leaves its journal
behind, and the next ``PyPads()`` uploads what is missing.

Creating a file or a folder costs about a millisecond on some disks, so small artifacts
are not files of their own: their bytes are appended to one data file, and a line in
``entities.jsonl`` says where they are. Only large ones (over ``INLINE_LIMIT``) are
staged as files, which the upload hard-links instead of copying.

A journal exists before its MLflow run does (the run is opened off the script's
thread), so it is named by a local id and learns the run id later:

    <PYPADS_HOME>/journal/<local id>/
        meta.json        tracking URI, experiment, run id once known, pid, final status
        entities.jsonl   one line per param set, metric, tag set or small artifact
        artifacts.data   the bytes of small artifacts (and of pieces appended to one)
        committed        how many bytes of entities.jsonl are in MLflow
        artifacts/…      large artifact files, removed once uploaded
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import uuid
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import psutil

from pypads.store import RunTarget, pypads_home

MAX_TAG_LENGTH = 8000
INLINE_LIMIT = 1 << 20  # larger artifacts are staged as files of their own


def journal_root() -> Path:
    return pypads_home() / "journal"


@dataclass
class Batch:
    """Journal entries folded into what one round of ``log_batch`` calls sends."""

    params: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    metrics: list[tuple[str, float, int, int]] = field(default_factory=list)  # key, value, timestamp, step
    artifacts: set[str] = field(default_factory=set)  # paths to upload
    offset: int = 0  # the journal length these entities reach

    def add(self, entry: dict[str, Any], offset: int = 0) -> None:
        kind = entry["kind"]
        if kind == "params":
            for key, value in entry["items"].items():
                self.params.setdefault(key, value)  # MLflow refuses to change a param
        elif kind == "tags":
            self.tags.update({key: str(value)[:MAX_TAG_LENGTH] for key, value in entry["items"].items()})
        elif kind == "metric":
            self.metrics.append((entry["key"], entry["value"], entry["timestamp"], entry["step"]))
        elif kind == "artifact":
            self.artifacts.add(entry["path"])
        self.offset = max(self.offset, offset)

    @property
    def has_entities(self) -> bool:
        return bool(self.params or self.tags or self.metrics)


class Journal:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.artifacts = folder / "artifacts"
        self._lock = threading.Lock()
        self._entities = folder / "entities.jsonl"
        self._data = folder / "artifacts.data"
        self._descriptors: dict[Path, int] = {}
        self._descriptor_pid = 0
        self._data_size = 0
        # Where each small artifact's bytes are in the data file: (offset, size) pieces,
        # one for an artifact written whole, several for one appended to.
        self._inline: dict[str, list[tuple[int, int]]] = {}
        self._files: set[str] = set()  # artifacts staged as files of their own

    @classmethod
    def create(cls, target: RunTarget, root: Path | None = None) -> Journal:
        folder = (root or journal_root()) / uuid.uuid4().hex
        (folder / "artifacts").mkdir(parents=True)
        journal = cls(folder)
        journal._write_meta({
            "run_id": target.join_run_id, "owns_run": target.join_run_id is None,
            "tracking_uri": target.store.tracking_uri, "experiment": target.experiment_name,
            "artifact_root": str(target.store.artifact_root) if target.store.artifact_root else None,
            "pid": os.getpid(), "started": psutil.Process().create_time(), "status": None,
        })
        return journal

    def set_run_id(self, run_id: str) -> None:
        self._update_meta(run_id=run_id)

    def set_status(self, status: str) -> None:
        """The status the run ends with, should the journal outlive this process."""
        self._update_meta(status=status)

    def reopen(self) -> None:
        """Make the folder again after ``discard`` (for a write that comes late)."""
        self.artifacts.mkdir(parents=True, exist_ok=True)

    # --- on the calling thread --------------------------------------------------------
    def record(self, entry: dict[str, Any]) -> int:
        """Append one entity line; returns the journal's length after it."""
        data = (json.dumps(entry) + "\n").encode()
        with self._lock:
            return self._append(self._entities, data)

    def stage(self, path: str, content: bytes, append: bool = False) -> int:
        """Keep an artifact (or, with ``append``, a piece to add to its end) until it is
        uploaded. Returns the journal's length after its line (0 for a large artifact,
        which gets a file of its own and no line)."""
        if len(content) > INLINE_LIMIT and not append:
            self.stage_file(path, lambda stream: stream.write(content))
            return 0
        with self._lock:
            at = self._data_size
            self._append(self._data, content)
            self._data_size += len(content)
            pieces = self._inline.setdefault(path, []) if append else []
            pieces.append((at, len(content)))
            self._inline[path] = pieces
            replaces_file = path in self._files
            self._files.discard(path)
            line = {"kind": "artifact", "path": path, "append": append, "at": at, "size": len(content)}
            offset = self._append(self._entities, (json.dumps(line) + "\n").encode())
        if replaces_file:
            self.unstage(path)
        return offset

    def stage_file(self, path: str, write: Callable[[BinaryIO], Any]) -> None:
        """Keep the artifact that ``write`` writes into the file it is given: large
        content goes to disk once, straight from where it is."""
        target = self.artifacts / path
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(target, write)
        with self._lock:
            self._inline.pop(path, None)
            self._files.add(path)

    def _append(self, path: Path, data: bytes) -> int:
        # Files are opened once for the journal's life: opening and closing one per
        # metric cost more than all the rest of a hot metric call.
        if self._descriptor_pid != os.getpid():
            self._descriptors, self._descriptor_pid = {}, os.getpid()
        descriptor = self._descriptors.get(path)
        if descriptor is None:
            descriptor = self._descriptors[path] = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view):]
        return os.lseek(descriptor, 0, os.SEEK_CUR)

    # --- on the writer's thread -------------------------------------------------------
    def commit(self, offset: int) -> None:
        write_atomically(self.folder / "committed", str(offset).encode())

    def committed(self) -> int:
        try:
            return int((self.folder / "committed").read_text())
        except (OSError, ValueError):
            return 0

    def entries_after(self, offset: int) -> Iterator[dict[str, Any]]:
        if not self._entities.exists():
            return
        with open(self._entities, "rb") as stream:
            stream.seek(offset)
            for line in stream:
                try:
                    yield json.loads(line)
                except ValueError:  # a line torn by the crash
                    return

    def pending(self) -> Batch:
        """What is recorded but not yet committed to MLflow."""
        batch = Batch()
        for entry in self.entries_after(self.committed()):
            batch.add(entry)
        return batch

    def materialize(self, path: str, target: Path) -> bool:
        """Put the artifact's current content at ``target`` (hard-linked if it is a
        file of its own); False if the journal has no such artifact."""
        with self._lock:
            pieces = list(self._inline.get(path, ()))
        if pieces:
            with open(self._data, "rb") as data, open(target, "wb") as out:
                for at, size in pieces:
                    data.seek(at)
                    out.write(data.read(size))
            return True
        source = self.artifacts / path
        if not source.exists():
            return False
        try:
            os.link(source, target)
        except OSError:
            shutil.copyfile(source, target)
        return True

    def artifact_paths(self) -> list[str]:
        """Every artifact the journal holds (for recovery: it uploads them all again)."""
        self._read_index()
        files = {p.relative_to(self.artifacts).as_posix() for p in self.artifacts.rglob("*") if p.is_file()}
        return sorted(files | set(self._inline))

    def _read_index(self) -> None:
        """Rebuild where small artifacts are, from the lines of a journal left behind."""
        inline: dict[str, list[tuple[int, int]]] = {}
        for entry in self.entries_after(0):
            if entry.get("kind") == "artifact":
                pieces = inline.setdefault(entry["path"], []) if entry["append"] else []
                pieces.append((entry["at"], entry["size"]))
                inline[entry["path"]] = pieces
        with self._lock:
            self._inline = inline

    def unstage(self, path: str) -> None:
        """Drop an uploaded artifact that has a file of its own."""
        (self.artifacts / path).unlink(missing_ok=True)

    def discard(self) -> None:
        with self._lock:
            if self._descriptor_pid == os.getpid():
                for descriptor in self._descriptors.values():
                    os.close(descriptor)
            self._descriptors, self._data_size, self._inline, self._files = {}, 0, {}, set()
        shutil.rmtree(self.folder, ignore_errors=True)

    # --- ownership --------------------------------------------------------------------
    def meta(self) -> dict[str, Any]:
        return json.loads((self.folder / "meta.json").read_text())

    def owner_alive(self) -> bool:
        meta = self.meta()
        try:
            return abs(psutil.Process(meta["pid"]).create_time() - meta["started"]) < 1.0
        except (psutil.Error, KeyError):
            return False

    def claim(self) -> Journal | None:
        """Take over a journal left behind, so no other process recovers it too: the
        folder moves (atomically: only one process can move it) and names this process
        as its owner. Returns the journal at its new place; None if another process
        was first."""
        claimed = self.folder.with_name(f"{self.folder.name.split('.')[0]}.{os.getpid()}")
        try:
            os.rename(self.folder, claimed)
        except OSError:
            return None
        journal = Journal(claimed)
        journal._update_meta(pid=os.getpid(), started=psutil.Process().create_time())
        return journal

    def _write_meta(self, meta: dict[str, Any]) -> None:
        write_atomically(self.folder / "meta.json", json.dumps(meta).encode())

    def _update_meta(self, **changes: Any) -> None:
        with self._lock:
            self._write_meta({**self.meta(), **changes})


def left_behind(root: Path | None = None) -> list[Journal]:
    """Journals whose process is gone."""
    base = root or journal_root()
    if not base.is_dir():
        return []
    journals = []
    for folder in sorted(base.iterdir()):
        journal = Journal(folder)
        try:
            if not journal.owner_alive():
                journals.append(journal)
        except (OSError, ValueError):
            warnings.warn(f"pypads: unreadable journal {folder} left as it is", stacklevel=2)
    return journals


def write_atomically(path: Path, content: bytes | Callable[[BinaryIO], None]) -> None:
    """Write ``content`` (bytes, or a function that writes into the file it is given)
    to ``path`` so that readers, and a process killed meanwhile, see the old file or
    the whole new one, never a part."""
    staging = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(staging, "wb") as stream:
        if callable(content):
            content(stream)
        else:
            stream.write(content)
    os.replace(staging, path)
