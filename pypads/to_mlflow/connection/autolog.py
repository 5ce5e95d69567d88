"""MLflow's own autologging, switched on inside the run pypads tracks (the
``MlflowAutologger`` logger) and off again at its end."""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Mapping
from typing import Any

import mlflow
from mlflow.utils import import_hooks

from pypads.to_mlflow.connection.runs import start_fluent_run

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


def enable_autolog(run_id: str | None, options: Mapping[str, Any]) -> Callable[[], None]:
    """Switch MLflow's autologging on for every flavoured library, now or when it is
    imported, writing into ``run_id`` (made MLflow's active run in this thread). Returns
    what switches it off again."""
    if run_id is not None and mlflow.active_run() is None:
        start_fluent_run(run_id)
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

    return disable


def _accepted(function: Callable[..., Any], options: Mapping[str, Any]) -> dict[str, Any]:
    parameters = inspect.signature(function).parameters
    return {key: value for key, value in options.items() if key in parameters}
