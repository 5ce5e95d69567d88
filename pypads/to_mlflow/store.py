"""Where runs go: the tracking URI, the artifact folder and the experiment."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from pypads.core import pypads_home, redact_text

DEFAULT_EXPERIMENT = "pypads"


@dataclass(frozen=True)
class Store:
    """An MLflow tracking URI and, for local stores, the folder artifacts go to."""

    tracking_uri: str
    artifact_root: Path | None

    @property
    def is_local(self) -> bool:
        """A SQLite file or a folder on this machine, rather than a server."""
        return not _is_uri(self.tracking_uri) or self.tracking_uri.startswith(("sqlite:", "file:"))

    @property
    def display_uri(self) -> str:
        """The tracking URI to show in messages: without a user and password
        (``http://***@host``) or secret query values (``?token=***``)."""
        return redact_text(self.tracking_uri)

    def ui_command(self, mlflow_executable: str = "mlflow") -> str:
        """The command that opens this store in the MLflow UI."""
        artifacts = f" --default-artifact-root {self.artifact_root.as_uri()}" if self.artifact_root else ""
        return f"{mlflow_executable} ui --backend-store-uri {self.tracking_uri}{artifacts}"


@dataclass(frozen=True)
class RunTarget:
    """The run to track into: an existing one to join, or a new one in an experiment."""

    store: Store
    experiment_name: str
    join_run_id: str | None = None
    user: str | None = None  # the new run's ``mlflow.user`` (a pseudonym), None: MLflow's, the login name
    # A rank of a parallel job (MPI): the job's digest and this process' rank. Rank 0's
    # run is the job's run; each other rank's is a child run of it (see connection.runs).
    mpi: tuple[str, int] | None = None


def resolve_store(uri: str | None = None) -> Store:
    """The store for ``uri``, else ``$MLFLOW_TRACKING_URI``, else ``$MLFLOW_PATH``
    (a folder or a URI), else a SQLite store in :func:`pypads_home`."""
    chosen = uri or os.environ.get("MLFLOW_TRACKING_URI") or os.environ.get("MLFLOW_PATH")
    if not chosen:
        return _sqlite_in(pypads_home())
    if _is_uri(chosen):
        return Store(chosen, _artifacts_beside(chosen))
    return _sqlite_in(Path(chosen).expanduser().resolve())


def _is_uri(text: str) -> bool:
    # "databricks" alone is a tracking URI too: MLflow's word for the workspace configured.
    if text == "databricks":
        return True
    return re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", text) is not None and not re.match(r"^[A-Za-z]:[\\/]", text)


def _sqlite_in(folder: Path) -> Store:
    folder.mkdir(parents=True, exist_ok=True)
    return Store(f"sqlite:///{folder / 'mlflow.db'}", folder / "artifacts")


def sqlite_file(uri: str) -> Path | None:
    """The database file of a SQLite store's URI (relative if the URI's path is), None
    for any other store."""
    if not uri.startswith("sqlite:///"):
        return None
    return Path(uri[len("sqlite:///") :].split("?", 1)[0]).expanduser()


def _artifacts_beside(uri: str) -> Path | None:
    """SQLite stores keep their artifacts beside the database file, never in the cwd."""
    database = sqlite_file(uri)
    return database.resolve().parent / "artifacts" if database is not None else None


def default_experiment_name() -> str:
    """The running script's name (``train`` for ``python train.py``), else ``pypads``."""
    main = sys.modules.get("__main__")
    script = getattr(main, "__file__", None) or (sys.argv[0] if sys.argv and sys.argv[0] not in ("", "-c", "-m") else "")
    return Path(script).stem or DEFAULT_EXPERIMENT
