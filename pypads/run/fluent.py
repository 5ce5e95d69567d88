"""The run and the script's own MLflow, which pypads must not contradict: the store an
active MLflow run decides, and the environment variables through which its fluent API
(``mlflow.log_*``) finds pypads' run.

What MLflow itself is asked or told (MLflow's active run in the script's thread, say)
goes through :mod:`pypads.to_mlflow.access`, which imports MLflow into no script that
has not imported it.
"""

from __future__ import annotations

import os

from pypads.core import ConfigError, redact_text
from pypads.to_mlflow import Store, explicit_mlflow_uri, mlflow_tracking_uri, resolve_store


def store_for(uri: str | None, joined: str | None) -> Store:
    """The store to track into. An active MLflow run is joined in its own store; a
    ``uri`` naming another store then is a contradiction, refused."""
    if joined is None:
        return resolve_store(uri or explicit_mlflow_uri())
    current = mlflow_tracking_uri()
    if uri is not None and resolve_store(uri).tracking_uri != resolve_store(current).tracking_uri:
        raise ConfigError(f"uri: an MLflow run is active in {redact_text(current)}; "
                          f"pypads joins it there and cannot track into {redact_text(uri)}")
    return resolve_store(current)


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
