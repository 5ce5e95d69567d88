"""The durable local copy of what a run still owes MLflow.

Params, metrics, tags and artifacts are on local disk before the call that logged
them returns, appended to files kept open. The uploader (``uploader.py``) reads the
journal as it grows, uploads from it and records how far it got: the script and the
uploader share nothing but these files, so the uploader can run in a process of its
own. A journal whose script and uploader are both gone (SIGKILL, or a store that did
not answer) is left behind, and the next ``PyPads()`` uploads what is missing.

Creating a file or a folder costs about a millisecond on some disks, so small artifacts
are not files of their own: their bytes are appended to one data file, and a line in
``entities.jsonl`` says where they are. Only large ones (over ``INLINE_LIMIT``) are
staged as files (and get a line too), which the upload hard-links instead of copying.

A journal exists before its MLflow run does (the run is opened off the script's
thread), so it is named by a local id and learns the run id later:

    <PYPADS_HOME>/journal/<local id>/
        meta.json        tracking URI, experiment, run id once known, the script's pid,
                         the run's start time (when PyPads() ran, not when MLflow heard of it)
        uploader.json    the pid of the process that uploads it, if not the script
        status           the status the script ended the run with
        entities.jsonl   one line per param set, metric, tag set or artifact
        artifacts.data   the bytes of small artifacts (and of pieces appended to one)
        committed        how many bytes of entities.jsonl are in MLflow
        artifacts/…      large artifact files, removed once uploaded
        entries/…        large contents of other entries (a saved model), likewise

Besides params, metrics, tags and artifacts, a line may be an entry the uploader turns
into more than a value (:data:`ENTRY_KINDS`): a model to save as an MLflow model, a
dataset to log as a run input, a child run to create and end in one go.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import threading
import time
import uuid
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import psutil

from pypads.store import RunTarget, pypads_home

MAX_TAG_LENGTH = 8000
INLINE_LIMIT = 1 << 20  # larger artifacts are staged as files of their own
# Journal files hold what the run holds before MLflow's access rules apply, and
# meta.json the tracking URI with any credentials in it: readable by their owner only.
PRIVATE_FILE = 0o600
PRIVATE_FOLDER = 0o700
# Set aside when a journal is made, freed when the disk is full (see release_reserve):
# enough for the small files that end a run, and a few MLflow metadata rows.
RESERVE_BYTES = 256 << 10


# Entries written with Journal.record_entry. A model is saved once, in its final state, when
# the run ends (see models()); datasets and child runs go up with the batch they are in.
ENTRY_KINDS = frozenset({"model", "dataset", "child_run"})


def journal_root() -> Path:
    return pypads_home() / "journal"


@dataclass
class Batch:
    """Journal entries folded into what one round of ``log_batch`` calls sends."""

    params: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    metrics: list[tuple[str, float, int, int]] = field(default_factory=list)  # key, value, timestamp, step
    artifacts: set[str] = field(default_factory=set)  # paths to upload
    datasets: list[dict[str, Any]] = field(default_factory=list)  # "dataset" entries
    child_runs: list[dict[str, Any]] = field(default_factory=list)  # "child_run" entries
    offset: int = 0  # the journal length these entities reach

    def add(self, entry: dict[str, Any]) -> None:
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
        elif kind == "dataset":
            self.datasets.append(entry)
        elif kind == "child_run":
            self.child_runs.append(entry)

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
        self._reserve = folder / "reserve"
        self._descriptors: dict[Path, int] = {}
        self._descriptor_pid = 0
        self._encoded_keys: dict[str, str] = {}
        # The reading side: where each artifact is, from the lines read so far. A small
        # one is (offset, size) pieces of the data file (several for one appended to);
        # a large one, None: a file of its own.
        self._where: dict[str, list[tuple[int, int]] | None] = {}
        self._read = 0  # how far entities.jsonl has been read
        # The latest "model" entry of each key, from every line read: a model is saved
        # when the run ends, so its entry must survive the commits of the lines around it.
        self._models: dict[str, dict[str, Any]] = {}
        self._created: dict[str, Any] = {}  # the meta it was created with

    @classmethod
    def create(cls, target: RunTarget, root: Path | None = None) -> Journal:
        base = root or journal_root()
        base.mkdir(PRIVATE_FOLDER, parents=True, exist_ok=True)
        folder = base / uuid.uuid4().hex
        folder.mkdir(PRIVATE_FOLDER)
        (folder / "artifacts").mkdir(PRIVATE_FOLDER)
        journal = cls(folder)
        journal._created = {
            "run_id": target.join_run_id, "owns_run": target.join_run_id is None,
            "tracking_uri": target.store.tracking_uri, "experiment": target.experiment_name,
            "artifact_root": str(target.store.artifact_root) if target.store.artifact_root else None,
            "pid": os.getpid(), "started": psutil.Process().create_time(),
            # The run opens later, off the script's thread: MLflow gets this as its start.
            "start_time": int(time.time() * 1000),
        }
        journal._write_meta(journal._created)
        with _create(journal._reserve, PRIVATE_FILE) as reserve:
            reserve.write(bytes(RESERVE_BYTES))
        return journal

    def release_reserve(self) -> None:
        """Free the space set aside at creation. On a full disk this is what lets the
        run's status, its id and the upload's progress still be written, so that the
        run ends once instead of being recovered later as a second one."""
        try:
            self._reserve.unlink()
        except OSError:
            pass

    def set_run_id(self, run_id: str) -> None:
        self._update_meta(run_id=run_id)

    def set_status(self, status: str) -> None:
        """The status the run ends with, should the journal outlive this process."""
        write_atomically(self.folder / "status", status.encode(), PRIVATE_FILE)

    def status(self) -> str | None:
        try:
            return (self.folder / "status").read_text() or None
        except OSError:
            return None

    def set_uploader(self, pid: int) -> None:
        """Name the process that uploads this journal: while it lives, the journal is
        not left behind, even if the script is gone."""
        write_atomically(self.folder / "uploader.json",
                         json.dumps({"pid": pid, "started": psutil.Process(pid).create_time()}).encode(), PRIVATE_FILE)

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

    # --- on the calling thread --------------------------------------------------------
    def record(self, entry: dict[str, Any]) -> None:
        """Append one entity line."""
        data = (json.dumps(entry) + "\n").encode()
        with self._lock:
            self._append(self._entities, data)

    def record_metric(self, key: str, value: float, timestamp: int, step: int) -> None:
        """:meth:`record` of one metric, the line formatted directly: a scoring function
        called in a loop pays for this on every call, and ``json.dumps`` of a dict costs
        several times more. The line is the one ``json.dumps`` would write."""
        encoded_key = self._encoded_keys.get(key)
        if encoded_key is None:
            encoded_key = json.dumps(key)
            if len(self._encoded_keys) < 1024:  # metric names repeat; a name per step would not
                self._encoded_keys[key] = encoded_key
        # float.__repr__ is what json writes for a finite float; NaN and infinities it spells its own way.
        number = float.__repr__(value) if math.isfinite(value) else json.dumps(value)
        data = (f'{{"kind": "metric", "key": {encoded_key}, "value": {number}, '
                f'"timestamp": {timestamp}, "step": {step}}}\n').encode()
        with self._lock:
            self._append(self._entities, data)

    def stage(self, path: str, content: bytes, append: bool = False) -> None:
        """Keep an artifact (or, with ``append``, a piece to add to its end) until it is
        uploaded. A large one gets a file of its own (see :meth:`stage_file`)."""
        if len(content) > INLINE_LIMIT and not append:
            self.stage_file(path, lambda stream: stream.write(content))
            return
        with self._lock:
            self._append(self._data, content)
            at = os.lseek(self._descriptors[self._data], 0, os.SEEK_CUR) - len(content)
            line = {"kind": "artifact", "path": path, "append": append, "at": at, "size": len(content)}
            self._append(self._entities, (json.dumps(line) + "\n").encode())

    def stage_file(self, path: str, write: Callable[[BinaryIO], Any]) -> None:
        """Keep the artifact that ``write`` writes into the file it is given: large
        content goes to disk once, straight from where it is."""
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
            (self.folder / "entries").mkdir(PRIVATE_FOLDER, exist_ok=True)
            write_atomically(self.folder / "entries" / name, content, PRIVATE_FILE)
            self.record({**entry, "file": name})
            return
        with self._lock:
            if content is not None:
                self._append(self._data, content)
                at = os.lseek(self._descriptors[self._data], 0, os.SEEK_CUR) - len(content)
                entry = {**entry, "at": at, "size": len(content)}
            self._append(self._entities, (json.dumps(entry) + "\n").encode())

    def _record_file(self, path: str) -> None:
        self.record({"kind": "artifact", "path": path, "file": True})

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

    # --- on the uploader's side -----------------------------------------------------
    def commit(self, offset: int) -> None:
        write_atomically(self.folder / "committed", str(offset).encode(), PRIVATE_FILE)

    def committed(self) -> int:
        try:
            return int((self.folder / "committed").read_text())
        except (OSError, ValueError):
            return 0

    def has_news(self) -> bool:
        """Whether lines were added since the last :meth:`read_new`."""
        try:
            return self._entities.stat().st_size > self._read
        except OSError:
            return False

    def read_new(self, since: int = 0) -> Batch:
        """The entities of the lines added since the last call (of the lines after
        ``since`` on the first call), and where each artifact is (from every line)."""
        batch = Batch()
        if not self._entities.exists():
            return batch
        with open(self._entities, "rb") as stream:
            stream.seek(self._read)
            for line in stream:
                if not line.endswith(b"\n"):
                    break  # being written right now, or torn by a crash
                start, self._read = self._read, self._read + len(line)
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if entry.get("kind") == "artifact":
                    self._locate(entry)
                elif entry.get("kind") == "model":
                    self._models[str(entry.get("key"))] = entry
                if start >= since:
                    batch.add(entry)
        batch.offset = max(since, self._read)  # lines before ``since`` are committed already
        return batch

    def _locate(self, entry: dict[str, Any]) -> None:
        path = entry["path"]
        if entry.get("file"):
            self._where[path] = None
            return
        pieces = self._where.get(path) if entry["append"] else None
        self._where[path] = [*(pieces or ()), (entry["at"], entry["size"])]

    def models(self) -> list[dict[str, Any]]:
        """The latest "model" entry of each key among the lines read: the final state
        of each estimator the script fitted, to be saved as the run ends."""
        return list(self._models.values())

    def entry_content(self, entry: dict[str, Any]) -> bytes | None:
        """The content :meth:`record_entry` kept with ``entry`` (None if it has none)."""
        if "file" in entry:
            return (self.folder / "entries" / entry["file"]).read_bytes()
        if "at" not in entry:
            return None
        with open(self._data, "rb") as data:
            data.seek(entry["at"])
            return data.read(entry["size"])

    def staged_files(self) -> list[str]:
        """Artifacts that have files of their own and are not uploaded yet."""
        return sorted(path.relative_to(self.artifacts).as_posix() for path in self.artifacts.rglob("*")
                      if path.is_file() and not path.name.endswith(".tmp"))

    def materialize(self, path: str, target: Path) -> bool:
        """Put the artifact's content as last read at ``target`` (hard-linked if it is
        a file of its own); False if the journal has no such artifact."""
        pieces = self._where.get(path)
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

    def unstage(self, path: str, uploaded: Path) -> None:
        """Drop an uploaded artifact's file of its own if it is the one that went up
        (``uploaded`` is its hard link there), not a newer one staged meanwhile. A file
        left over stays until the journal is discarded: the upload always takes the
        artifact's latest content."""
        source = self.artifacts / path
        try:
            if os.path.samefile(source, uploaded):
                source.unlink()
        except OSError:
            pass

    def close(self) -> None:
        """Close the files kept open for appending (a later append opens them again)."""
        with self._lock:
            if self._descriptor_pid == os.getpid():
                for descriptor in self._descriptors.values():
                    os.close(descriptor)
            self._descriptors = {}

    def discard(self) -> None:
        self.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def exists(self) -> bool:
        """False once :meth:`discard` has begun (it is only called once all is in MLflow)."""
        return (self.folder / "meta.json").exists()

    # --- ownership --------------------------------------------------------------------
    def meta(self) -> dict[str, Any]:
        return json.loads((self.folder / "meta.json").read_text())

    def owner_alive(self) -> bool:
        """Whether the script that wrote it, or the process uploading it, still runs."""
        owners = [self.meta()]
        try:
            owners.append(json.loads((self.folder / "uploader.json").read_text()))
        except (OSError, ValueError):
            pass
        return any(_alive(owner) for owner in owners)

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
        try:
            os.chmod(claimed, PRIVATE_FOLDER)  # one an older pypads left readable to all
        except OSError:
            pass
        journal = Journal(claimed)
        journal._update_meta(pid=os.getpid(), started=psutil.Process().create_time())
        return journal

    def _write_meta(self, meta: dict[str, Any]) -> None:
        write_atomically(self.folder / "meta.json", json.dumps(meta).encode(), PRIVATE_FILE)

    def _update_meta(self, **changes: Any) -> None:
        with self._lock:
            self._write_meta({**self.meta(), **changes})


def _alive(owner: dict[str, Any]) -> bool:
    try:  # the start time tells a process from a later one that got the same pid
        return abs(psutil.Process(owner["pid"]).create_time() - owner["started"]) < 1.0
    except (psutil.Error, KeyError, TypeError):
        return False


def left_behind(root: Path | None = None) -> list[Journal]:
    """Journals whose script and uploader are both gone."""
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


def write_atomically(path: Path, content: bytes | Callable[[BinaryIO], None], mode: int = 0o666) -> None:
    """Write ``content`` (bytes, or a function that writes into the file it is given)
    to ``path`` so that readers, and a process killed meanwhile, see the old file or
    the whole new one, never a part. ``mode`` as for ``os.open`` (the umask applies)."""
    staging = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with _create(staging, mode) as stream:
        if callable(content):
            content(stream)
        else:
            stream.write(content)
    os.replace(staging, path)


def write_then_name(folder: Path, write: Callable[[BinaryIO], str], mode: int = 0o666) -> str:
    """Write a file into ``folder`` whose name ``write`` returns after writing it (a
    name made from the content), atomically as :func:`write_atomically`; returns the name."""
    staging = folder / f".new.{os.getpid()}.{threading.get_ident()}.tmp"
    with _create(staging, mode) as stream:
        name = write(stream)
    os.replace(staging, folder / name)
    return name


def _create(path: Path, mode: int) -> BinaryIO:
    """``open(path, "wb")`` with ``mode`` for a new file: a private file is never
    readable to others, not even for a moment."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode), "wb")
