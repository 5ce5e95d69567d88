"""The durable local copy of what a run still owes MLflow.

Params, metrics and tags are on local disk before the call that logged them returns,
as JSON lines appended to a file kept open; artifacts are staged as files. The writer
uploads from here and records how far it got. A process that dies (SIGKILL, power loss
of the machine aside), or that ends while the store does not answer, leaves its journal
behind, and the next ``PyPads()`` uploads what is missing.

A journal exists before its MLflow run does (the run is opened off the script's
thread), so it is named by a local id and learns the run id later:

    <PYPADS_HOME>/journal/<local id>/
        meta.json        tracking URI, experiment, run id once known, pid, final status
        entities.jsonl   one line per param set, metric or tag set
        committed        how many bytes of entities.jsonl are in MLflow
        artifacts/…      staged artifact files, removed once uploaded
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from pypads.store import RunTarget, pypads_home

MAX_TAG_LENGTH = 8000


def journal_root() -> Path:
    return pypads_home() / "journal"


@dataclass
class Batch:
    """Journal entries folded into what one round of ``log_batch`` calls sends."""

    params: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    metrics: list[tuple[str, float, int, int]] = field(default_factory=list)  # key, value, timestamp, step
    artifacts: dict[str, bool] = field(default_factory=dict)  # path -> still growing
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
            self.artifacts[entry["path"]] = self.artifacts.get(entry["path"], False) or entry["append"]
            return
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
        self._descriptor: int | None = None
        self._descriptor_pid = 0

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
            descriptor = self._open()
            os.write(descriptor, data)
            return os.lseek(descriptor, 0, os.SEEK_CUR)

    def stage(self, path: str, content: bytes, append: bool = False) -> None:
        target = self.artifacts / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if append:
            with self._lock, open(target, "ab") as stream:
                stream.write(content)
        else:
            _replace(target, content)

    def _open(self) -> int:
        # One descriptor for the journal's life: opening and closing the file per
        # metric cost more than the rest of a hot metric call.
        if self._descriptor is None or self._descriptor_pid != os.getpid():
            self._descriptor = os.open(self._entities, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            self._descriptor_pid = os.getpid()
        return self._descriptor

    # --- on the writer's thread -------------------------------------------------------
    def commit(self, offset: int) -> None:
        _replace(self.folder / "committed", str(offset).encode())

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

    def staged(self) -> list[str]:
        return sorted(p.relative_to(self.artifacts).as_posix() for p in self.artifacts.rglob("*") if p.is_file())

    def unstage(self, path: str) -> None:
        (self.artifacts / path).unlink(missing_ok=True)

    def discard(self) -> None:
        with self._lock:
            if self._descriptor is not None and self._descriptor_pid == os.getpid():
                os.close(self._descriptor)
            self._descriptor = None
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
        _replace(self.folder / "meta.json", json.dumps(meta).encode())

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


def _replace(path: Path, content: bytes) -> None:
    staging = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    staging.write_bytes(content)
    os.replace(staging, path)
