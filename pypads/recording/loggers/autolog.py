"""MlflowAutologger: MLflow's own autologging, turned on inside pypads' run."""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Mapping
from typing import Any

from pypads.core.logger import Logger
from pypads.run.context import RunContext
from pypads.to_mlflow.uploader import connection

# import name of a library -> MLflow flavor module
FLAVORS = {
    "sklearn": "mlflow.sklearn",
    "xgboost": "mlflow.xgboost",
    "lightgbm": "mlflow.lightgbm",
    "statsmodels": "mlflow.statsmodels",
    "torch": "mlflow.pytorch",
    "tensorflow": "mlflow.tensorflow",
    "keras": "mlflow.keras",
}


class MlflowAutologger(Logger):
    """For each library in ``FLAVORS``: ``mlflow.<flavor>.autolog()`` as soon as the
    library is imported (at once if it already is), so MLflow's autologging writes into
    the run pypads tracks — never a run of its own — and is switched off at run end.
    Options are passed to ``autolog`` (by default no models, no datasets, silent).

    MLflow's autologging writes into the active run of the thread that fits, so
    switching this logger on makes ``PyPads()`` wait for the run to be open and make
    it MLflow's active run in the calling thread."""

    defaults = {"log_models": False, "log_datasets": False, "silent": True}

    def start(self, run: RunContext, options: Mapping[str, Any]) -> None:
        mlflow = importlib.import_module("mlflow")
        import_hooks = importlib.import_module("mlflow.utils.import_hooks")
        if run.run_id is not None and mlflow.active_run() is None:
            connection().start_fluent_run(run.run_id)
        enabled: list[str] = []
        ended: list[bool] = []

        def enable(library: str) -> None:
            if ended or library in enabled:
                return
            flavor = importlib.import_module(FLAVORS[library])
            flavor.autolog(**_accepted(flavor.autolog, options))
            enabled.append(library)

        for library in FLAVORS:
            if library in sys.modules:
                enable(library)
            else:
                import_hooks.register_post_import_hook(lambda _module, library=library: enable(library), library, overwrite=True)

        def disable() -> None:
            ended.append(True)
            for library in enabled:
                importlib.import_module(FLAVORS[library]).autolog(disable=True)
            enabled.clear()

        run.on_end(disable)


def _accepted(function: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    parameters = inspect.signature(function).parameters
    return {key: value for key, value in options.items() if key in parameters}
