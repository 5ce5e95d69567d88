"""MLflow for the floors above: the one place from which they reach it, typed.

Two things live in MLflow for pypads: the store its uploader writes into
(:data:`mlflow_connection`, every function of :mod:`pypads.to_mlflow.connection`, imported on
first use), and the script's own MLflow, whose active run and tracking URI pypads must
not contradict (read here without importing MLflow into a script that has not; set,
for a script that uses it, to pypads' store and run).
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pypads.core import redact_text, warn

__all__ = ["activate_run", "active_mlflow_run_id", "mlflow_connection", "explicit_mlflow_uri", "mlflow_tracking_uri",
           "script_uses_mlflow", "set_mlflow_tracking_uri"]


class _Connection:
    """Stands for :mod:`pypads.to_mlflow.connection` until first used.

    Importing MLflow takes about a second that the script should not wait for. MLflow
    goes first: while one thread opens the run inside MLflow's import (see
    :func:`pypads.to_mlflow.link.base.hold_mlflow_import`, which imports the connection),
    another thread must wait at MLflow's import, not hold the connection's import lock:
    that would deadlock."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # a tool's probe (inspect.unwrap, doctest): no MLflow for it
            raise AttributeError(name)
        importlib.import_module("mlflow")
        return getattr(importlib.import_module("pypads.to_mlflow.connection"), name)


if TYPE_CHECKING:  # the checker sees the package itself, with every signature
    from pypads.to_mlflow import connection as mlflow_connection
else:
    mlflow_connection = _Connection()


def _script_mlflow() -> ModuleType | None:
    """MLflow if this process has imported it, without importing it otherwise."""
    if "mlflow" not in sys.modules:
        return None
    return importlib.import_module("mlflow")  # waits if another thread is importing it right now


def script_uses_mlflow() -> bool:
    """Whether the script has imported MLflow (and so may use its API during the run)."""
    return _script_mlflow() is not None


def active_mlflow_run_id() -> str | None:
    """The run active in MLflow in this thread: none in a script that has not imported it."""
    mlflow = _script_mlflow()
    active = mlflow.active_run() if mlflow is not None else None
    return str(active.info.run_id) if active is not None else None


def explicit_mlflow_uri() -> str | None:
    """A tracking URI the script set with ``mlflow.set_tracking_uri`` (the environment is
    read by :func:`pypads.to_mlflow.store.resolve_store` itself)."""
    mlflow = _script_mlflow()
    if mlflow is None:
        return None
    is_set = getattr(mlflow.tracking._tracking_service.utils, "is_tracking_uri_set", None)
    return str(mlflow.get_tracking_uri()) if callable(is_set) and is_set() else None


def mlflow_tracking_uri() -> str:
    """The tracking URI MLflow uses now (imports MLflow: for a script with an active run)."""
    return str(importlib.import_module("mlflow").get_tracking_uri())


def set_mlflow_tracking_uri(uri: str | None) -> None:
    """Point the script's MLflow at ``uri`` (None unsets it, in MLflow and the environment)."""
    mlflow = _script_mlflow()
    if mlflow is not None:
        mlflow.set_tracking_uri(uri)


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
        mlflow_connection.start_fluent_run(run_id)
    except Exception as error:
        warn(f"pypads opened run {run_id} at {display_uri} but could not make it MLflow's active run here "
             f"({redact_text(str(error))})", stacklevel=4)
