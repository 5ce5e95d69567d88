"""The way to MLflow, the second floor: everything between a value handed to the run's
writer and MLflow's store.

The journal keeps what a run still owes MLflow; the link starts and watches the
uploader; the uploader (a process of its own) reads the journal, evaluates models and
uploads; the connection is the one place that speaks MLflow's client API. Nothing above
this floor imports MLflow.

This module is the floor's face: the floors above import the floor from here, never
from its modules.
"""

from pypads.to_mlflow.access import (
    activate_run,
    active_mlflow_run_id,
    explicit_mlflow_uri,
    mlflow_connection,
    mlflow_tracking_uri,
    script_uses_mlflow,
    set_mlflow_tracking_uri,
)
from pypads.to_mlflow.evaluation.metrics import SILHOUETTE_ROWS
from pypads.to_mlflow.evaluation.record import TASKS, sample_rows
from pypads.to_mlflow.journal import JournalReader, journal_root, write_atomically, write_then_name
from pypads.to_mlflow.journal.reading import left_behind
from pypads.to_mlflow.journal.writing import JournalWriter
from pypads.to_mlflow.link.base import LinkSettings, Outcome, UploaderLink
from pypads.to_mlflow.link.spare import uploader_idle
from pypads.to_mlflow.link.starting import start_uploader
from pypads.to_mlflow.link.thread import UploaderThread
from pypads.to_mlflow.store import RunTarget, Store, default_experiment_name, resolve_store
from pypads.to_mlflow.timeouts import PATIENCE, SERVER_TIMEOUT, default_timeout
from pypads.to_mlflow.uploader.reports import warn_locally
from pypads.to_mlflow.uploader.uploading import OpenRun, Uploader

__all__ = [
    "JournalReader", "JournalWriter", "LinkSettings", "OpenRun", "Outcome", "PATIENCE", "RunTarget",
    "SERVER_TIMEOUT", "SILHOUETTE_ROWS", "Store", "TASKS", "Uploader", "UploaderLink", "UploaderThread", "activate_run",
    "active_mlflow_run_id", "default_experiment_name", "default_timeout", "explicit_mlflow_uri", "journal_root",
    "left_behind", "mlflow_connection", "mlflow_tracking_uri", "resolve_store", "sample_rows", "script_uses_mlflow",
    "set_mlflow_tracking_uri", "start_uploader", "uploader_idle", "warn_locally", "write_atomically", "write_then_name"
]
