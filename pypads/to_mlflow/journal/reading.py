"""The uploader's side of a journal: reads it as it grows, finds each artifact's
content, records how far the upload got, and finds journals left behind
(see :mod:`pypads.to_mlflow.journal.format`)."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from pypads.core import warn
from pypads.to_mlflow.journal.appending import complete_lines
from pypads.to_mlflow.journal.format import (
    ARTIFACT,
    COMMITTED,
    ENDED,
    ENTRIES,
    METRIC,
    PARAMS,
    PRIVATE_FILE,
    PRIVATE_FOLDER,
    TAGS,
    UPLOADER,
    JournalFolder,
    journal_root,
    staging_owner,
    stays_inside,
    write_atomically,
)

MAX_TAG_LENGTH = 8000


@dataclass
class Batch:
    """Journal entries folded into what one round of ``log_batch`` calls sends."""

    params: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    metrics: list[tuple[str, float, int, int]] = field(default_factory=list)  # key, value, timestamp, step
    artifacts: set[str] = field(default_factory=set)  # paths to upload
    datasets: list[dict[str, Any]] = field(default_factory=list)  # "dataset" entries
    child_runs: list[dict[str, Any]] = field(default_factory=list)  # "child_run" entries
    evaluations: list[dict[str, Any]] = field(default_factory=list)  # "evaluation" entries
    charts: list[dict[str, Any]] = field(default_factory=list)  # "chart" entries
    models: int = 0  # how many "model" entries
    offset: int = 0  # the journal length these entities reach

    def add(self, entry: dict[str, Any]) -> None:
        kind = entry["kind"]
        if kind == PARAMS:
            for key, value in entry["items"].items():
                self.params.setdefault(key, value)  # MLflow refuses to change a param
        elif kind == TAGS:
            self.tags.update({key: str(value)[:MAX_TAG_LENGTH] for key, value in entry["items"].items()})
        elif kind == METRIC:
            self.metrics.append((entry["key"], entry["value"], entry["timestamp"], entry["step"]))
        elif kind == ARTIFACT:
            self.artifacts.add(entry["path"])
        elif kind == "dataset":
            self.datasets.append(entry)
        elif kind == "child_run":
            self.child_runs.append(entry)
        elif kind == "evaluation":
            self.evaluations.append(entry)
        elif kind == "chart":
            self.charts.append(entry)
        elif kind == "model":
            self.models += 1

    @property
    def has_entities(self) -> bool:
        return bool(self.params or self.tags or self.metrics)


class JournalReader(JournalFolder):
    """Reads a journal for its upload, and records the upload's progress in it."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        # Where each artifact is, from the lines read so far. A small one is (offset,
        # size) pieces of the data file (several for one appended to); a large one,
        # None: a file of its own.
        self._where: dict[str, list[tuple[int, int]] | None] = {}
        self._read = 0  # how far entities.jsonl has been read
        # The latest "model" entry of each key, from every line read: a model is saved
        # when the run ends, so its entry must survive the commits of the lines around it.
        self._models: dict[str, dict[str, Any]] = {}
        # Likewise what a model's page needs: its card by label, the datasets by name.
        self._cards: dict[str, dict[str, Any]] = {}
        self._datasets: dict[str, dict[str, Any]] = {}

    def commit(self, offset: int) -> None:
        """Note that the entity lines up to ``offset`` are in MLflow."""
        write_atomically(self.folder / COMMITTED, str(offset).encode(), PRIVATE_FILE)

    def mark_ended(self) -> None:
        """Note that the run is ended and all of it but its pictures is in MLflow: the
        pictures are drawn after the script has gone, and an uploader that dies drawing
        them must not have a recovery save the models a second time."""
        write_atomically(self.folder / ENDED, b"", PRIVATE_FILE)

    def ended(self) -> bool:
        """Whether :meth:`mark_ended` was called: nothing is left to send but pictures."""
        return (self.folder / ENDED).exists()

    def has_news(self) -> bool:
        """Whether lines were added since the last :meth:`read_new`."""
        try:
            with open(self._entities, "rb") as stream:
                stream.seek(self._read)
                return stream.read(1) not in (b"", b"\0")  # zeros: room the writer took ahead
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
            for line in complete_lines(stream):  # not one being written right now, or torn by a crash
                start, self._read = self._read, self._read + len(line)
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if entry.get("kind") == ARTIFACT:
                    self._locate(entry)
                elif entry.get("kind") == "model":
                    self._models[str(entry.get("key"))] = entry
                elif entry.get("kind") == "model_card":
                    self._cards[str(entry.get("model_label"))] = entry
                elif entry.get("kind") == "dataset":
                    self._datasets[str(entry.get("name"))] = entry
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

    def model_card(self, label: str) -> dict[str, Any] | None:
        """What the run knows of the model labelled ``label``: its params, its metrics
        and its datasets (see :mod:`pypads.recording.loggers.comparison`)."""
        return self._cards.get(label)

    def dataset(self, name: str) -> dict[str, Any] | None:
        """The latest "dataset" entry named ``name`` among the lines read."""
        return self._datasets.get(name)

    def entry_content(self, entry: dict[str, Any]) -> bytes | None:
        """The content kept with ``entry`` (None if it has none)."""
        if "file" in entry:
            return (self.folder / ENTRIES / str(entry["file"])).read_bytes()
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
        a file of its own); False if the journal has no such artifact, or its path leaves
        the run's artifacts (a hostile line: ``../../etc/passwd``)."""
        if not stays_inside(path):
            return False
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
        if not stays_inside(path):
            return
        source = self.artifacts / path
        try:
            if os.path.samefile(source, uploaded):
                source.unlink()
        except OSError:
            pass

    def discard(self) -> None:
        """Delete the journal (all of it is in MLflow)."""
        shutil.rmtree(self.folder, ignore_errors=True)

    # --- ownership --------------------------------------------------------------------
    def set_uploader(self, pid: int) -> None:
        """Name the process that uploads this journal: while it lives, the journal is
        not left behind, even if the script is gone."""
        write_atomically(self.folder / UPLOADER,
                         json.dumps({"pid": pid, "started": psutil.Process(pid).create_time()}).encode(), PRIVATE_FILE)

    def owner_alive(self) -> bool:
        """Whether the script that wrote it, or the process uploading it, still runs."""
        owners = [self.meta()]
        try:
            owners.append(json.loads((self.folder / UPLOADER).read_text()))
        except (OSError, ValueError):
            pass
        return any(_alive(owner) for owner in owners)

    def claim(self) -> JournalReader | None:
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
        journal = type(self)(claimed)
        journal._update_meta(pid=os.getpid(), started=psutil.Process().create_time())
        return journal


def _alive(owner: dict[str, Any]) -> bool:
    try:  # the start time tells a process from a later one that got the same pid
        return bool(abs(psutil.Process(owner["pid"]).create_time() - owner["started"]) < 1.0)
    except (psutil.Error, KeyError, TypeError):
        return False


def left_behind(root: Path | None = None) -> list[JournalReader]:
    """Journals whose script and uploader are both gone."""
    base = root or journal_root()
    if not base.is_dir():
        return []
    journals = []
    for folder in sorted(base.iterdir()):
        maker = staging_owner(folder.name)
        if maker is not None:  # a journal being made; if its maker died halfway, nothing is in it yet
            if not psutil.pid_exists(maker):
                shutil.rmtree(folder, ignore_errors=True)
            continue
        journal = JournalReader(folder)
        try:
            if not journal.owner_alive():
                journals.append(journal)
        except (OSError, ValueError):
            # pypads' own warn: under `python -W error` a warning must not become the script's exception
            warn(f"pypads: unreadable journal {folder} left as it is")
    return journals
