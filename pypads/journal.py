"""The durable local copy of what a run still owes MLflow.

Everything a logger submits is on local disk before the call returns: params, metrics
and tags as JSON lines, artifacts as staged files. The writer uploads from here and
records how far it got. A process that dies (SIGKILL, power loss of the machine aside,
a store that is down at exit) leaves its journal behind, and the next ``PyPads()``
(or :func:`recover`) uploads what is missing and marks the run KILLED.

    <PYPADS_HOME>/journal/<run_id>/
        meta.json        run id, tracking URI, pid
        entities.jsonl   one line per param set, metric or tag set
        committed        how many bytes of entities.jsonl are in MLflow
        artifacts/…      staged artifact files, removed once uploaded
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil

from pypads.store import pypads_home


def journal_root() -> Path:
    return pypads_home() / "journal"


class Journal:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.artifacts = folder / "artifacts"
        self._lock = threading.Lock()
        self._entities = folder / "entities.jsonl"

    @classmethod
    def create(cls, run_id: str, tracking_uri: str, root: Path | None = None) -> Journal:
        folder = (root or journal_root()) / run_id
        (folder / "artifacts").mkdir(parents=True, exist_ok=True)
        _replace(folder / "meta.json", json.dumps(
            {"run_id": run_id, "tracking_uri": tracking_uri, "pid": os.getpid(),
             "started": psutil.Process().create_time()}).encode())
        return cls(folder)

    def reopen(self) -> None:
        """Make the folder again after ``discard`` (for a write that comes late)."""
        self.artifacts.mkdir(parents=True, exist_ok=True)

    # --- on the calling thread --------------------------------------------------------
    def record(self, entry: dict[str, Any]) -> int:
        """Append one entity line; returns the journal's length after it."""
        data = (json.dumps(entry) + "\n").encode()
        with self._lock:
            descriptor = os.open(self._entities, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(descriptor, data)
                return os.lseek(descriptor, 0, os.SEEK_END)
            finally:
                os.close(descriptor)

    def stage(self, path: str, content: bytes, append: bool = False) -> None:
        target = self.artifacts / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if append:
            with self._lock, open(target, "ab") as stream:
                stream.write(content)
        else:
            _replace(target, content)

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

    def staged(self) -> list[str]:
        return sorted(p.relative_to(self.artifacts).as_posix() for p in self.artifacts.rglob("*") if p.is_file())

    def unstage(self, path: str) -> None:
        (self.artifacts / path).unlink(missing_ok=True)

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def meta(self) -> dict[str, Any]:
        return json.loads((self.folder / "meta.json").read_text())

    def owner_alive(self) -> bool:
        meta = self.meta()
        try:
            return abs(psutil.Process(meta["pid"]).create_time() - meta["started"]) < 1.0
        except (psutil.Error, KeyError):
            return False


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
