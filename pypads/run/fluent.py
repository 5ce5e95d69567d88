"""The script's own MLflow, which pypads must not contradict: whether the script imported
it, the run active in it, the tracking URI it set, and the environment variables through
which its fluent API (``mlflow.log_*``) finds pypads' run.

Nothing here imports MLflow into a script that has not imported it.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

from pypads.core.errors import ConfigError, warn
from pypads.core.privacy import redact_text
from pypads.to_mlflow.store import Store, resolve_store
from pypads.to_mlflow.uploader.uploading import connection


def imported_mlflow() -> ModuleType | None:
    """MLflow if this process has imported it, without importing it otherwise."""
    if "mlflow" not in sys.modules:
        return None
    return importlib.import_module("mlflow")  # waits if another thread is importing it right now


def active_mlflow_run_id() -> str | None:
    """The run active in MLflow in this thread, without importing MLflow: a script
    that has not imported it has no active run."""
    mlflow = imported_mlflow()
    active = mlflow.active_run() if mlflow is not None else None
    return active.info.run_id if active is not None else None


def store_for(uri: str | None, joined: str | None) -> Store:
    """The store to track into. An active MLflow run is joined in its own store; a
    ``uri`` naming another store then is a contradiction, refused."""
    if joined is None:
        return resolve_store(uri or explicit_mlflow_uri())
    current = importlib.import_module("mlflow").get_tracking_uri()
    if uri is not None and resolve_store(uri).tracking_uri != resolve_store(current).tracking_uri:
        raise ConfigError(f"uri: an MLflow run is active in {redact_text(current)}; "
                          f"pypads joins it there and cannot track into {redact_text(uri)}")
    return resolve_store(current)


def explicit_mlflow_uri() -> str | None:
    """A tracking URI the user set with ``mlflow.set_tracking_uri`` (the environment
    is read by :func:`resolve_store` itself)."""
    mlflow = imported_mlflow()
    if mlflow is None:
        return None
    is_set = getattr(mlflow.tracking._tracking_service.utils, "is_tracking_uri_set", None)
    return mlflow.get_tracking_uri() if callable(is_set) and is_set() else None


def activate_run(run_id: str | None, display_uri: str) -> None:
    """Make the run the uploader opened (``run_id``) MLflow's active run in this thread,
    for a script that uses MLflow's API itself: MLflow keeps its active run per thread,
    and the uploader opened it on another. The one place the script touches a run's life
    in MLflow; None (the store did not answer in time) is a warning, and the uploader
    goes on trying."""
    if run_id is None:
        warn(f"pypads could not open an MLflow run at {display_uri} in time; it is not MLflow's active run here, "
             "and the uploader tries again", stacklevel=4)
        return
    try:
        connection().start_fluent_run(run_id)
    except Exception as error:
        warn(f"pypads opened run {run_id} at {display_uri} but could not make it MLflow's active run here "
             f"({redact_text(str(error))})", stacklevel=4)


class Environment:
    """Environment variables set for the run, and restored to what they were after it."""

    def __init__(self) -> None:
        self._saved: dict[str, str | None] = {}

    def set(self, **values: str) -> None:
        for key, value in values.items():
            self._saved.setdefault(key, os.environ.get(key))
            os.environ[key] = value

    def restore(self, *keys: str) -> None:
        """Restore ``keys`` (all of those set, if none are named)."""
        for key in keys or list(self._saved):
            if key not in self._saved:
                continue
            previous = self._saved.pop(key)
            if previous is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = previous
