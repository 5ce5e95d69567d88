"""MlflowAutologger: MLflow's own autologging, turned on inside pypads' run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pypads.core import Logger
from pypads.run import RunContext
from pypads.to_mlflow import mlflow_connection


class MlflowAutologger(Logger):
    """For each library with an MLflow flavour (``FLAVORS`` in
    :mod:`pypads.to_mlflow.connection.autolog`): ``mlflow.<flavor>.autolog()`` as soon as
    the library is imported (at once if it already is), so MLflow's autologging writes into
    the run pypads tracks — never a run of its own — and is switched off at run end.
    Options are passed to ``autolog`` (by default no models, no datasets, silent).

    MLflow's autologging writes into the active run of the thread that fits, so
    switching this logger on makes ``PyPads()`` wait for the run to be open and make
    it MLflow's active run in the calling thread."""

    defaults = {"log_models": False, "log_datasets": False, "silent": True}

    def start(self, run: RunContext, options: Mapping[str, Any]) -> None:
        run.on_end(mlflow_connection.enable_autolog(run.run_id, options))
