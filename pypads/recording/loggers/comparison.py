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
:class:`~pypads.recording.loggers.parameters.Parameters`); a script with one model gets no child run.

What is known of each model is gathered as the run goes (:class:`Rows`): the
Parameters logger notes a label's params, the Metric logger its scores.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pypads.core import Logger
from pypads.run import RunContext, TrackedCall

MAX_SCORES = 1000  # metric names per model: a loop over many datasets stays bounded


class Score(NamedTuple):
    """The last value of one metric computed on a model's predictions."""

    value: float
    step: int
    timestamp: int
    """When it was computed (ms since the epoch), as the metric's own line says."""
    data: str | None
    """The script's name for the data the prediction was made on (a dataset's name)."""


@dataclass
class ModelRow:
    """What the run knows of one of the script's estimators, under one label."""

    label: str
    estimator_class: str
    predicts: bool
    params: dict[str, str]
    started: int  # its first fit's start, ms since the epoch
    ended: int  # its last fit's end
    scores: dict[str, Score] = field(default_factory=dict)  # metric -> its last value
    # metric -> the steps before its last of a training curve: the child run shows the
    # whole curve, the model's page (one value per metric) the last.
    curves: dict[str, list[tuple[int, float]]] = field(default_factory=dict)


class Rows:
    """The rows of one run, in the order labels were given; get it with :func:`rows`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.by_label: dict[str, ModelRow] = {}
        # Per label, dataset name -> context, in order of use. Apart from the rows: a fit's
        # data may be seen before its params give the row.
        self.datasets: dict[str, dict[str, str]] = {}

    def fitted(self, label: str, instance: Any, params: dict[str, str], started: int, ended: int) -> None:
        """The script fitted ``instance``, labelled ``label``, with ``params``, from
        ``started`` to ``ended`` (ms since the epoch)."""
        kind = type(instance)
        with self._lock:
            row = self.by_label.get(label)
            if row is None:
                self.by_label[label] = ModelRow(label, f"{kind.__module__}.{kind.__qualname__}",
                                                callable(getattr(instance, "predict", None)), dict(params), started, ended)
            else:  # refitted with the same params (a loop over data): the span covers them all
                row.ended = max(row.ended, ended)

    def scored(self, label: str, metric: str, score: Score) -> None:
        """A metric was computed on a prediction of the model labelled ``label``."""
        row = self.by_label.get(label)
        if row is not None and (metric in row.scores or len(row.scores) < MAX_SCORES):
            row.scores[metric] = score

    def curve(self, label: str, metric: str, steps: list[tuple[int, float]], timestamp: int,
              data: str | None = None) -> None:
        """A training curve of the model labelled ``label``: ``(step, value)`` pairs, the
        last of them its score, computed on the dataset named ``data`` if it is known."""
        row = self.by_label.get(label)
        if row is not None and steps and (metric in row.scores or len(row.scores) < MAX_SCORES):
            *earlier, (step, value) = steps
            row.curves[metric] = earlier
            row.scores[metric] = Score(value, step, timestamp, data)

    def used(self, label: str, dataset: str, context: str) -> None:
        """The model labelled ``label`` was fitted on (``training``) or predicted on
        (``evaluation``) the dataset named ``dataset``."""
        used = self.datasets.get(label)
        if used is None:
            with self._lock:
                used = self.datasets.setdefault(label, {})
        if dataset not in used and len(used) < MAX_SCORES:
            used[dataset] = context


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
    # costs the end of the run four MLflow calls (create, log_batch, log_inputs and
    # set_terminated: 20-30 ms, each making SQLite commits); the parent keeps every model's
    # metrics and params. 100 fits in a loop made 100 child runs, 2 s of the run's end.
    defaults = {"max_child_runs": 20}

    def start(self, run: RunContext, options: Mapping[str, Any]) -> None:
        run.on_end(lambda: self._write(run, options["max_child_runs"]))

    def post(self, call: TrackedCall, before: None, options: Mapping[str, Any]) -> None:
        pass  # the Parameters, Metric and Datasets loggers fill the rows

    def _write(self, run: RunContext, limit: int) -> None:
        every = list(rows(run).by_label.values())
        used = rows(run).datasets
        for row in every:  # what each saved model's page shows (see pypads.to_mlflow.connection.models)
            run.writer.log_entry({"kind": "model_card", **_facts(row, used.get(row.label, {}))})
        predictors = [row for row in every if row.predicts]
        if len(predictors) < 2:
            return
        if len(predictors) > limit:
            run.writer.set_tag("pypads.comparison", f"{len(predictors)} models: child runs for the first {limit} only")
        for row in predictors[:limit]:
            facts = _facts(row, used.get(row.label, {}))
            facts["metrics"] = [[key, value, score.timestamp, step, None] for key, steps in row.curves.items()
                                if (score := row.scores.get(key)) is not None for step, value in steps] + facts["metrics"]
            run.writer.log_entry({
                "kind": "child_run", "name": row.label, **facts,
                "start_time": row.started, "end_time": row.ended,
                "tags": {"estimator_name": row.estimator_class.rpartition(".")[2], "estimator_class": row.estimator_class,
                         "pypads.model": row.label},
            })


def _facts(row: ModelRow, datasets: dict[str, str]) -> dict[str, Any]:
    """A row as a journal entry's fields: its label, params, datasets (``[name,
    context]``) and the last value of each of its metrics, as ``[key, value, timestamp,
    step, dataset]`` (a child run adds the earlier steps of its curves)."""
    return {"model_label": row.label, "params": row.params, "datasets": [[name, context] for name, context in datasets.items()],
            "metrics": [[key, score.value, score.timestamp, score.step, score.data] for key, score in row.scores.items()]}
