"""The uploader on a thread of the script: where the script has imported MLflow anyway,
where no process can be started, or where the uploader's process died."""

from __future__ import annotations

# Imported now, not by MLflow's import on the uploader's thread: it registers a threading
# exit hook, which Python refuses once it shuts down, and a short script can end while
# the uploader is still importing MLflow (the run would then stay in the journal).
import concurrent.futures.thread  # noqa: F401
import importlib
import sys
import threading

from pypads.core import PatchingFinder
from pypads.to_mlflow.link.base import LinkSettings, Outcome, hold_mlflow_import
from pypads.to_mlflow.timeouts import default_timeout, recovery_timeout
from pypads.to_mlflow.uploader.recovery import Recovery
from pypads.to_mlflow.uploader.uploading import Uploader


class UploaderThread:
    """An :class:`~pypads.to_mlflow.link.base.UploaderLink` to an uploader on a thread of this process."""

    def __init__(self, settings: LinkSettings) -> None:
        self.uploader = Uploader(settings.journal.folder, open_run=settings.open_run, on_open=settings.on_open,
                                 pictures=False)
        self.interval = settings.interval
        self._recovery = Recovery(pictures=False) if settings.recover else None
        self._status: str | None = None
        self._timeout = default_timeout(self.uploader.target.store)
        self._wait_timeout = settings.wait_timeout
        self._finished = False
        self._stopped = threading.Event()
        self._import_hold: PatchingFinder | None = None
        self._thread = threading.Thread(target=self._loop, name="pypads-writer", daemon=True)

    def start(self) -> bool:
        if "mlflow" not in sys.modules:
            self._import_hold = hold_mlflow_import(self.uploader.open)
        self._thread.start()
        return True

    @property
    def run_id(self) -> str | None:
        opened = self.uploader.opened
        if not opened.is_set():
            self.uploader.clock.wait(opened.is_set, self._wait_timeout)
        return self.uploader.run_id

    @property
    def is_open(self) -> bool:
        return self.uploader.opened.is_set() and self.uploader.run_id is not None

    @property
    def pid(self) -> int | None:
        return None

    def flush(self) -> bool:
        return self.uploader.drain()

    def close(self, status: str | None, timeout: float) -> Outcome:
        self._status, self._timeout = status, timeout
        self._stopped.set()
        if self._thread is threading.current_thread() or self.uploader.draining_here:
            return Outcome.KEPT  # a signal handler interrupted our own upload: the journal keeps it
        if self._thread.ident is None:
            self._thread.start()  # never started: the final upload still happens
        if not self.uploader.clock.wait(lambda: not self._thread.is_alive(), timeout):
            return Outcome.TIMED_OUT
        if self._import_hold is not None:
            self._import_hold.uninstall()
        return Outcome.CLOSED if self._finished else Outcome.KEPT

    def _loop(self) -> None:
        if self._import_hold is not None:
            # Import MLflow here; whichever thread runs its import opens the run in it.
            try:
                importlib.import_module("mlflow")
            except Exception:  # noqa: S110 - open() below reports it, and run_id stops waiting
                pass
        if self.uploader.open() and self._recovery is not None:
            self._recovery.start()
        while not self._stopped.wait(self.interval):
            if self.uploader.journal.has_news():
                self.uploader.drain()
        if self._recovery is not None and self._recovery.started:
            self._recovery.wait(recovery_timeout(self._timeout))
        self._finished = self.uploader.finish(self._status)
