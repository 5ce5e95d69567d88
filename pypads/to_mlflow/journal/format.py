"""The journal's format on disk, in one place: the script's side writes it
(:mod:`pypads.to_mlflow.journal.writing`), the uploader's side reads it (:mod:`pypads.to_mlflow.journal.reading`).

A journal exists before its MLflow run does (the run is opened off the script's
thread), so it is named by a local id and learns the run id later:

    <PYPADS_HOME>/journal/<local id>/
        meta.json        tracking URI, experiment, run id once known, the script's pid,
                         the run's start time (when PyPads() ran, not when MLflow heard of it)
        uploader.json    the pid of the process that uploads it, if not the script
        status           the status the script ended the run with
        entities.jsonl   one line per param set, metric, tag set or artifact (zeros after
                         the last line while its writer has it open, or if it crashed)
        artifacts.data   the bytes of small artifacts (and of pieces appended to one)
        committed        how many bytes of entities.jsonl are in MLflow
        artifacts/…      large artifact files, removed once uploaded
        entries/…        large contents of other entries (a saved model), likewise

Creating a file or a folder costs about a millisecond on some disks, so small artifacts
are not files of their own: their bytes are appended to one data file, and a line in
``entities.jsonl`` says where they are. Only large ones (over ``INLINE_LIMIT``) are
staged as files (and get a line too), which the upload hard-links instead of copying.

Journals left by an older pypads are read as they are: this format only grows.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from pypads.core import pypads_home
from pypads.to_mlflow.store import DEFAULT_EXPERIMENT, RunTarget, Store

# --- files --------------------------------------------------------------------------
META = "meta.json"
UPLOADER = "uploader.json"
STATUS = "status"
ENTITIES = "entities.jsonl"
DATA = "artifacts.data"
COMMITTED = "committed"
ENDED = "ended"  # the run is ended with all but its pictures: see JournalReader.mark_ended
RESERVE = "reserve"
ARTIFACTS = "artifacts"
ENTRIES = "entries"

# --- lines of entities.jsonl (a JSON object each, with a "kind") ----------------------
PARAMS, TAGS, METRIC, ARTIFACT = "params", "tags", "metric", "artifact"
# Entries the uploader turns into more than a value. A model is saved once, in its final
# state, when the run ends, with what its model card says of it (params, metrics,
# datasets); datasets and child runs go up with the batch they are in; an evaluation (a
# model's predictions on a dataset, in an .npz) becomes its scores and pictures; a chart
# (a CSV table a mapping file's reading logged) becomes a picture among its model's.
ENTRY_KINDS = frozenset({"model", "model_card", "dataset", "child_run", "evaluation", "chart"})

# --- the meta's fields ----------------------------------------------------------------
# run_id, owns_run (False: a joined run, which pypads does not end), tracking_uri,
# experiment, artifact_root, pid and started (the script's, or a recovering process'),
# start_time (ms: MLflow's start of the run), user (the pseudonym the run's mlflow.user
# is, with ``pseudonymize``), status (older pypads kept it here), mpi ([job digest, rank]
# of an MPI rank, else null).
META_FIELDS = ("run_id", "owns_run", "tracking_uri", "experiment", "artifact_root", "pid", "started", "start_time",
               "user", "mpi")

INLINE_LIMIT = 1 << 20  # larger artifacts are staged as files of their own
# Journal files hold what the run holds before MLflow's access rules apply, and
# meta.json the tracking URI with any credentials in it: readable by their owner only.
PRIVATE_FILE = 0o600
PRIVATE_FOLDER = 0o700
# Set aside when a journal is made, freed when the disk is full (see release_reserve):
# enough for the small files that end a run, and a few MLflow metadata rows.
RESERVE_BYTES = 256 << 10


def journal_root() -> Path:
    return pypads_home() / "journal"


def run_target(meta: dict[str, Any]) -> RunTarget:
    """The run a journal's meta names (or the experiment to open it in)."""
    store = Store(meta["tracking_uri"], Path(meta["artifact_root"]) if meta.get("artifact_root") else None)
    return RunTarget(store, meta.get("experiment") or DEFAULT_EXPERIMENT, meta.get("run_id"), meta.get("user"),
                     _mpi(meta.get("mpi")))


def _mpi(value: Any) -> tuple[str, int] | None:
    """The meta's ``mpi``, if it is what pypads writes (a journal is not trusted)."""
    if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str) and type(value[1]) is int:
        return value[0], value[1]
    return None


def entity_line(entry: dict[str, Any]) -> bytes:
    return (json.dumps(entry) + "\n").encode()


def stays_inside(path: str) -> bool:
    """Whether the artifact path ``path`` names a file inside the run's artifacts: not
    absolute, no ``..`` (a mapping file's name, a journal line: neither is trusted)."""
    parts = PurePosixPath(path).parts
    return bool(parts) and not path.startswith("/") and ".." not in parts


def artifact_line(path: str, append: bool, at: int, size: int) -> bytes:
    """The line of a small artifact (or a piece appended to one): ``size`` bytes ``at``
    an offset of the data file."""
    return entity_line({"kind": ARTIFACT, "path": path, "append": append, "at": at, "size": size})


def artifact_file_line(path: str) -> bytes:
    """The line of an artifact staged as a file of its own under ``artifacts/``."""
    return entity_line({"kind": ARTIFACT, "path": path, "file": True})


class JournalFolder:
    """What both sides of a journal share: its files, its meta, its status and progress."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.artifacts = folder / ARTIFACTS
        self._lock = threading.Lock()
        self._entities = folder / ENTITIES
        self._data = folder / DATA
        self._reserve = folder / RESERVE

    def meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = json.loads((self.folder / META).read_text())
        return meta

    def set_run_id(self, run_id: str) -> None:
        self._update_meta(run_id=run_id)

    def status(self) -> str | None:
        """The status the script ended the run with, if it got that far."""
        try:
            return (self.folder / STATUS).read_text() or None
        except OSError:
            return None

    def committed(self) -> int:
        """How many bytes of the entity lines are in MLflow."""
        try:
            return int((self.folder / COMMITTED).read_text())
        except (OSError, ValueError):
            return 0

    def exists(self) -> bool:
        """False once a discard has begun (it is only done once all is in MLflow)."""
        return (self.folder / META).exists()

    def release_reserve(self) -> None:
        """Free the space set aside at creation. On a full disk this is what lets the
        run's status, its id and the upload's progress still be written, so that the
        run ends once instead of being recovered later as a second one."""
        try:
            self._reserve.unlink()
        except OSError:
            pass

    def _write_meta(self, meta: dict[str, Any]) -> None:
        write_atomically(self.folder / META, json.dumps(meta).encode(), PRIVATE_FILE)

    def _update_meta(self, **changes: Any) -> None:
        with self._lock:
            self._write_meta({**self.meta(), **changes})


def write_atomically(path: Path, content: bytes | Callable[[BinaryIO], None], mode: int = 0o666) -> None:
    """Write ``content`` (bytes, or a function that writes into the file it is given)
    to ``path`` so that readers, and a process killed meanwhile, see the old file or
    the whole new one, never a part. ``mode`` as for ``os.open`` (the umask applies)."""
    staging = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with create_private(staging, mode) as stream:
        if callable(content):
            content(stream)
        else:
            stream.write(content)
    os.replace(staging, path)


def write_then_name(folder: Path, write: Callable[[BinaryIO], str], mode: int = 0o666) -> str:
    """Write a file into ``folder`` whose name ``write`` returns after writing it (a
    name made from the content), atomically as :func:`write_atomically`; returns the name."""
    staging = folder / f".new.{os.getpid()}.{threading.get_ident()}.tmp"
    with create_private(staging, mode) as stream:
        name = write(stream)
    os.replace(staging, folder / name)
    return name


def create_private(path: Path, mode: int) -> BinaryIO:
    """``open(path, "wb")`` with ``mode`` for a new file: a private file is never
    readable to others, not even for a moment."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode), "wb")


STAGING_SUFFIX = ".creating"


def staging_name(name: str, pid: int) -> str:
    """The folder a journal is made in before it is complete: hidden, naming its maker."""
    return f".{name}.{pid}{STAGING_SUFFIX}"


def staging_owner(folder_name: str) -> int | None:
    """The process making the journal in a staging folder of this name; None for any other folder."""
    if not (folder_name.startswith(".") and folder_name.endswith(STAGING_SUFFIX)):
        return None
    pid = folder_name[: -len(STAGING_SUFFIX)].rpartition(".")[2]
    return int(pid) if pid.isdigit() else None
