"""What the writer may ask of an uploader, wherever it runs (:class:`UploaderLink`)."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

from pypads.core import PatchingFinder
from pypads.to_mlflow.journal.writing import JournalWriter
from pypads.to_mlflow.uploader.uploading import OpenRun


class Outcome(enum.Enum):
    """How closing a link went."""

    CLOSED = "closed"  # everything is in MLflow and the journal is gone
    KEPT = "kept"  # something did not reach MLflow: the journal keeps it for a later PyPads()
    TIMED_OUT = "timed out"  # MLflow left one call unanswered too long: the journal keeps the rest
    DIED = "died"  # the uploader stopped before it said how the end went


@dataclass(frozen=True)
class LinkSettings:
    """What every uploader of a run is started with.

    Args:
        journal: the run's journal on local disk.
        interval: seconds between two uploads.
        on_open: called with the run id once the run exists.
        open_run: how an uploader thread opens the run (None: :func:`pypads.to_mlflow.connection.open_run`).
        recover: also upload the journals that earlier processes left behind.
        wait_timeout: how long asking for the run id or flushing may wait for one MLflow
            call that does not answer (see :mod:`pypads.to_mlflow.timeouts`).
        idle: seconds an uploader process waits as a spare for the next run once this
            one has ended, and whether a spare may be claimed (0: no).
    """

    journal: JournalWriter
    interval: float
    on_open: Callable[[str], None] | None
    open_run: OpenRun | None
    recover: bool
    wait_timeout: float
    idle: float = 0.0


class UploaderLink(Protocol):
    """The writer's handle on the uploader of its run. Every wait is bounded by how long
    one MLflow call goes unanswered (see :class:`pypads.to_mlflow.timeouts.AnswerClock`)."""

    def start(self) -> bool:
        """Start uploading (opening the run first); False if this uploader cannot start."""

    @property
    def run_id(self) -> str | None:
        """The run id; waits until the run is open, at most ``wait_timeout`` without an
        answer from MLflow (None if it could not be opened, or did not open in time)."""

    @property
    def is_open(self) -> bool:
        """Whether the run is open, without waiting."""

    @property
    def pid(self) -> int | None:
        """The uploader's process (None: a thread of the script's)."""

    def flush(self) -> bool:
        """Upload what the journal holds now; True once all of it is in MLflow."""

    def close(self, status: str | None, timeout: float) -> Outcome:
        """Upload the rest, end the run with ``status`` (None: leave it running) and stop,
        giving up once MLflow has not answered one call for ``timeout`` seconds."""


def hold_mlflow_import(open_run: Callable[[], Any]) -> PatchingFinder:
    """Make the first import of MLflow, by any thread, open the run before it returns.

    MLflow keeps the active run per thread, so the run the uploader opens is not the
    script's active run. The script's ``mlflow.log_*`` calls still reach it through
    ``MLFLOW_RUN_ID`` (set by ``on_open``), but only once the run exists: a script that
    imports MLflow right after ``PyPads()`` would otherwise log into a run of its own.
    Python makes every other thread's import of a module wait while one thread executes
    it, and this hook runs inside that execution.
    """
    finder: PatchingFinder

    def loaded(_module: ModuleType) -> None:
        finder.uninstall()
        open_run()

    finder = PatchingFinder(lambda name: name == "mlflow", loaded)
    finder.install()
    return finder
