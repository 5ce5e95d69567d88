"""The uploader a run starts with: a process of its own, or a thread of the script."""

from __future__ import annotations

from collections.abc import Callable

from pypads.to_mlflow.link.base import LinkSettings, UploaderLink
from pypads.to_mlflow.link.process import UploaderProcess
from pypads.to_mlflow.link.thread import UploaderThread


def start_uploader(settings: LinkSettings, in_process: bool, on_death: Callable[[], bool]) -> UploaderLink:
    """The run's uploader, started (it opens the run first): a process of its own unless
    ``in_process``, and a thread of this process where no process can be had. ``on_death``
    is called if the process stops before the run ended (see :class:`UploaderProcess`)."""
    if not in_process:
        process = UploaderProcess(settings, on_death=on_death)
        if process.start():
            return process
    thread = UploaderThread(settings)
    thread.start()
    return thread
