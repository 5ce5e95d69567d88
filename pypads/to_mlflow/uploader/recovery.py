"""Recovery: uploading the journals that earlier processes left behind."""

from __future__ import annotations

import threading

from pypads.to_mlflow.journal.reading import left_behind
from pypads.to_mlflow.timeouts import AnswerClock
from pypads.to_mlflow.uploader.reports import Warn, warn_locally
from pypads.to_mlflow.uploader.uploading import Uploader


def recover(clock: AnswerClock | None = None, warn: Warn = warn_locally, pictures: bool = True) -> list[str]:
    """Upload what dead processes left in their journals. A run that was never opened
    (the store was down) is opened now; a run still RUNNING ends with the status its
    script ended it with, or KILLED. Returns the run ids recovered. ``pictures=False``
    in the script's own process (see :class:`~pypads.to_mlflow.uploader.uploading.Uploader`)."""
    recovered = []
    for journal in left_behind():
        claimed = journal.claim()
        if claimed is None:
            continue  # another process is recovering it
        uploader = Uploader(claimed.folder, clock, warn, pictures=pictures)
        if uploader.finish(claimed.status() or claimed.meta().get("status") or "KILLED", only_if_running=True):
            recovered.append(uploader.run_id or "")
    return recovered


class Recovery:
    """:func:`recover` on a thread of its own, reporting instead of raising."""

    def __init__(self, warn: Warn = warn_locally, pictures: bool = True) -> None:
        self.clock = AnswerClock()
        self._warn = warn
        self._pictures = pictures
        self._thread = threading.Thread(target=self._run, name="pypads-recovery", daemon=True)

    def start(self) -> Recovery:
        self._thread.start()
        return self

    @property
    def started(self) -> bool:
        return self._thread.ident is not None

    def wait(self, timeout: float) -> bool:
        """Wait for it while MLflow answers; what it leaves, a later PyPads() finishes."""
        return self.clock.wait(lambda: not self._thread.is_alive(), timeout)

    def _run(self) -> None:
        try:
            recover(self.clock, self._warn, self._pictures)
        except Exception as error:
            self._warn("recovery", f"pypads could not recover a journal left by an earlier process: {error}")

