"""Comparison: two models trained in one script as two rows of MLflow's runs table.

A run is one script; the models in it are what a reader wants to compare. MLflow's
runs table compares runs, and its convention for parts of a run is child runs (tag
``mlflow.parentRunId``: the table nests them under their parent, and "Compare" takes
them side by side). So when the script fitted two or more estimators that predict, each
gets a child run named by its label (``RandomForestClassifier``, ``Ridge_1``): its
hyper-parameters as its params (bare, as scikit-learn spells them: ``max_depth``), the
last value of each metric computed on its predictions (``accuracy_score_X_test``, the
parent's ``<label>.accuracy_score_X_test``) and its saved model, whose source run it is.
The parent keeps every model's metrics and params (see
:class:`~pypads.loggers.parameters.Parameters`); a script with one model gets no child run.

What is known of each model is gathered as the run goes (:class:`Rows`): the
Parameters logger notes a label's params, the Metric logger its scores.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pypads.calls import Call
from pypads.context import RunContext
from pypads.loggers.base import Logger

MAX_SCORES = 1000  # metric names per model: a loop over many datasets stays bounded


@dataclass
class ModelRow:
    """What the run knows of one of the script's estimators, under one label."""

    label: str
    estimator_class: str
    predicts: bool
    params: dict[str, str]
    scores: dict[str, tuple[float, int]] = field(default_factory=dict)  # metric -> (last value, its step)


class Rows:
    """The rows of one run, in the order labels were given; get it with :func:`rows`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.by_label: dict[str, ModelRow] = {}

    def fitted(self, label: str, instance: Any, params: dict[str, str]) -> None:
        """The script fitted ``instance``, labelled ``label``, with ``params``."""
        kind = type(instance)
        with self._lock:
            if label not in self.by_label:
                self.by_label[label] = ModelRow(label, f"{kind.__module__}.{kind.__qualname__}",
                                                callable(getattr(instance, "predict", None)), dict(params))

    def scored(self, label: str, metric: str, value: float, step: int) -> None:
        """A metric was computed on a prediction of the model labelled ``label``."""
        row = self.by_label.get(label)
        if row is not None and (metric in row.scores or len(row.scores) < MAX_SCORES):
            row.scores[metric] = (value, step)


_KEY = object()


def rows(run: RunContext) -> Rows:
    """The model rows of ``run`` (one per run, shared by the loggers that fill them)."""
    state = run.state(_KEY)
    found = state.get("rows")
    if found is None:
        found = state.setdefault("rows", Rows())
    return found


class ModelRuns(Logger):
    """At the run's end, one child run per estimator the script fitted that predicts,
    if there are two or more (see the module's docstring); at most ``max_child_runs``
    (the tag ``pypads.comparison`` says if more were left out)."""

    # As many as Model saves models (max_models): a child run is a model's row, and each
    # costs the end of the run three MLflow calls (20 ms); the parent keeps every model's
    # metrics and params. 100 fits in a loop made 100 child runs, 2 s of the run's end.
    defaults = {"max_child_runs": 20}

    def start(self, run: RunContext, options: Mapping[str, Any]) -> None:
        started = int(time.time() * 1000)
        run.on_end(lambda: self._write(run, started, options["max_child_runs"]))

    def post(self, call: Call, before: None, options: Mapping[str, Any]) -> None:
        pass  # the Parameters and Metric loggers fill the rows

    def _write(self, run: RunContext, started: int, limit: int) -> None:
        predictors = [row for row in list(rows(run).by_label.values()) if row.predicts]
        if len(predictors) < 2:
            return
        if len(predictors) > limit:
            run.writer.set_tag("pypads.comparison", f"{len(predictors)} models: child runs for the first {limit} only")
        now = int(time.time() * 1000)
        for row in predictors[:limit]:
            run.writer.log_entry({
                "kind": "child_run", "name": row.label, "model_label": row.label,
                "params": row.params, "metrics": {name: value for name, (value, _) in row.scores.items()},
                "steps": {name: step for name, (_, step) in row.scores.items()},
                "timestamp": now, "start_time": started, "end_time": now,
                "tags": {"estimator_name": row.estimator_class.rpartition(".")[2], "estimator_class": row.estimator_class,
                         "pypads.model": row.label},
            })
