"""TrainingScores: what a fitted model predicts on the data it was fitted on, for the
uploader to score and draw (``training_accuracy_score``, a confusion matrix…).

The script's thread pays for the prediction alone: the predictions, the targets and the
class order go into the journal as one "evaluation" entry, and the uploader, which has
the run and its own core, computes the metrics and renders the pictures
(:mod:`pypads.to_mlflow.evaluation`). A prediction that would cost more than ``budget`` of the
fit (kNN, a large training set) is made on a fixed, seeded sample of the rows, whose
size the tag ``pypads.training_sample`` states.
"""

from __future__ import annotations

import io
import random
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from pypads.core import Logger
from pypads.recording.content.catalogue import catalogue, data_arguments
from pypads.recording.content.lineage import lineage
from pypads.recording.loggers.model import model_of
from pypads.run import RunContext, TrackedCall
from pypads.to_mlflow import SILHOUETTE_ROWS as MAX_FEATURE_ROWS
from pypads.to_mlflow import TASKS, sample_rows

PROBE_ROWS = 100  # rows predicted first, to time the prediction of the rest
MAX_ROWS = 100_000  # rows whose predictions go to the journal: a fast model on 10M rows copies no 800 MB
# Their score() is the accuracy or R² of predict(): the uploader computes it from the
# predictions instead of the script predicting a second time.
_MIXIN_SCORES = {"ClassifierMixin.score": "classifier", "RegressorMixin.score": "regressor"}


def task_of(estimator: Any) -> str | None:
    """``classifier``, ``regressor`` or ``clusterer``, as scikit-learn's tags say (a
    pipeline or a search answers for its final estimator); None for anything else."""
    try:
        kind = estimator.__sklearn_tags__().estimator_type
    except Exception:  # not a scikit-learn estimator, or one whose tags are broken
        kind = getattr(estimator, "_estimator_type", None)
    return kind if kind in TASKS else None


class TrainingScores(Logger):
    """After each fit the script makes (not one a library makes inside another), the
    model's predictions on its training data, for its ``training_…`` metrics and
    pictures (see the module's docstring). ``pictures=False`` keeps the metrics only;
    ``budget`` is the share of the fit's time the prediction may take before it is made
    on a sample instead (never fewer than ``min_rows`` rows). At most ``max_models``
    estimators are scored (as many as :class:`~pypads.recording.loggers.model.Model` saves): a
    loop of 100 fits pays for the first 20 and the refits of those."""

    defaults = {"pictures": True, "budget": 0.1, "min_rows": 1000, "max_models": 20}

    def start(self, run: RunContext, options: Mapping[str, Any]) -> None:
        # The datasets the script scores a model on get pictures too (draw_scored), if pictures are on.
        run.state(draw_scored)["on"] = bool(options["pictures"])

    def post(self, call: TrackedCall, before: None, options: Mapping[str, Any]) -> None:
        if call.depth != 0 or call.exception is not None or call.instance is None:
            return
        fitted = model_of(call.instance)
        task = task_of(call.instance) if fitted is not None else None
        if fitted is None or task is None:
            return
        features, targets = data_arguments(call)
        if features is None or (targets is None and task != "clusterer") or not _scorable(targets):
            return
        label = lineage(call.run).label(call.instance)
        scored: set[str] = call.run.state(self).setdefault("labels", set())
        if label not in scored:
            if len(scored) >= options["max_models"]:
                return
            scored.add(label)
        rows = _length(features)
        if rows is None or rows == 0:
            return
        budget = options["budget"] * (call.duration or 0.0)
        # A predict may draw from the global generators (DummyClassifier("stratified"), a
        # user's estimator): the script's next random number must be what it would be untracked.
        numpy_state, python_state = np.random.get_state(), random.getstate()
        try:
            predicted = _predict(call.instance, task, features, rows, budget, options["min_rows"])
        finally:
            np.random.set_state(numpy_state)
            random.setstate(python_state)
        if predicted is None:
            return
        arrays, sample = predicted
        if targets is not None:
            arrays["y_true"] = _plain(_rows(targets, sample))
        known = catalogue(call).identify(call, features, targets)
        if sample is not None:
            call.run.writer.set_tag("pypads.training_sample", f"{label}: scored on {len(sample)} of {rows} rows")
        arrays.update(_model_facts(fitted[0], task))
        call.run.writer.log_entry({
            "kind": "evaluation", "label": label, "task": task, "data": known.name if known else None,
            "prefix": "training", "rows": rows, "sample": None if sample is None else len(sample),
            "pictures": bool(options["pictures"]), "timestamp": int(time.time() * 1000),
            "default_score": _default_score(call.instance),
        }, _npz(arrays))


def _predict(estimator: Any, task: str, features: Any, rows: int, budget: float,
             min_rows: int) -> tuple[dict[str, np.ndarray], np.ndarray | None] | None:
    """The predictions (and class scores) on the training data, or on a seeded sample of
    it when predicting all of it would take more than ``budget`` seconds."""
    if task == "clusterer":
        labels = getattr(estimator, "labels_", None)  # free: the fit computed them
        if labels is not None and len(labels) == rows:
            # silhouette is quadratic in the rows: scored on a seeded sample of them, labels and features alike
            sample = sample_rows(rows, MAX_FEATURE_ROWS)
            return {"y_pred": _rows(np.asarray(labels), sample), "features": _numeric(_rows(features, sample))}, sample
    predict = getattr(estimator, "predict", None)
    if not callable(predict):
        return None
    sample = None
    if rows > max(min_rows, PROBE_ROWS):  # a sample is never smaller than min_rows: no need to time fewer
        started = time.perf_counter()
        _class_scores(estimator, _rows(features, np.arange(PROBE_ROWS)), task)
        predict(_rows(features, np.arange(PROBE_ROWS)))
        per_row = (time.perf_counter() - started) / PROBE_ROWS
        affordable = int(budget / per_row) if per_row > 0 else rows
        sample = sample_rows(rows, max(min_rows, min(affordable, MAX_ROWS)))
    data = _rows(features, sample)
    arrays = {"y_pred": _plain(predict(data))}
    scores = _class_scores(estimator, data, task)
    if scores is not None:
        arrays["scores"] = scores
    return arrays, sample


def _class_scores(estimator: Any, data: Any, task: str) -> np.ndarray | None:
    """``predict_proba``, else ``decision_function``, of a classifier (ROC curves, log loss)."""
    if task != "classifier":
        return None
    for method in ("predict_proba", "decision_function"):
        if hasattr(estimator, method):  # available_if: hasattr asks the estimator
            try:
                return np.asarray(getattr(estimator, method)(data), dtype=float)
            except Exception:  # e.g. an SVC without probability=True raises here
                continue
    return None


def _model_facts(estimator: Any, task: str) -> dict[str, np.ndarray]:
    facts: dict[str, np.ndarray] = {}
    classes = getattr(estimator, "classes_", None)
    if task == "classifier" and classes is not None:
        facts["classes"] = _plain(classes)
    inertia = getattr(estimator, "inertia_", None)
    if task == "clusterer" and isinstance(inertia, (int, float)):
        facts["inertia"] = np.asarray(float(inertia))
    return facts


def _default_score(estimator: Any) -> str | None:
    """Which of the predictions' scores ``estimator.score`` is, when it is scikit-learn's
    default (the accuracy of a classifier, the R² of a regressor), followed through a
    pipeline's last step and a search's refit model; None for a score of its own."""
    while True:
        if hasattr(estimator, "steps"):
            estimator = estimator.steps[-1][1]
        elif hasattr(estimator, "best_estimator_") and getattr(estimator, "scoring", None) is None:
            estimator = estimator.best_estimator_
        else:
            break
    score = getattr(type(estimator), "score", None)
    return _MIXIN_SCORES.get(getattr(score, "__qualname__", ""))


def _scorable(targets: Any) -> bool:
    """Whether scikit-learn's metrics take ``targets``: numbers, booleans, text or objects,
    not bytes, complex numbers, dates or records, and none missing (a fit on those scores
    nothing)."""
    if targets is None:  # a clusterer's
        return True
    dtype = getattr(targets, "dtype", None)
    if getattr(dtype, "kind", "O") not in "biufUO":
        return False
    try:  # missing targets (a nullable Int64 with None, NaN): nothing to score them against
        kind = getattr(dtype, "kind", "O")
        missing = targets.isna() if hasattr(targets, "isna") else np.isnan(targets) if kind == "f" else None
        return missing is None or not bool(np.asarray(missing).any())
    except (TypeError, ValueError):
        return True


def _length(data: Any) -> int | None:
    shape = getattr(data, "shape", None)
    if shape:
        return int(shape[0])
    try:
        return len(data)
    except TypeError:
        return None


def _rows(data: Any, which: np.ndarray | None) -> Any:
    """The rows ``which`` of an array, a DataFrame, a sparse matrix or a list (all of them for None)."""
    if which is None:
        return data
    if hasattr(data, "iloc"):
        return data.iloc[which]
    if isinstance(data, (list, tuple)):
        return [data[index] for index in which]
    if not hasattr(data, "__getitem__") and hasattr(data, "tocsr"):  # a COO matrix has no rows to index
        data = data.tocsr()
    return data[which]


def _plain(values: Any) -> np.ndarray:
    """An array the uploader can load without pickle: text for labels of objects."""
    array = np.asarray(values)
    return array.astype(str) if array.dtype.hasobject else array


def _numeric(values: Any) -> np.ndarray:
    if hasattr(values, "toarray"):  # a sparse sample: at most MAX_FEATURE_ROWS rows
        values = values.toarray()
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError):  # text columns: no silhouette, the rest stands
        return np.empty((0, 0))


def _npz(arrays: Mapping[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]  # numpy's stubs type **kwds as allow_pickle
    return buffer.getvalue()


# Scores of predicted labels, and of predicted values: what the script scored on a
# dataset says which pictures of that dataset make sense.
LABEL_METRICS = frozenset({
    "accuracy_score", "balanced_accuracy_score", "f1_score", "fbeta_score", "precision_score", "recall_score",
    "jaccard_score", "matthews_corrcoef", "cohen_kappa_score", "hamming_loss", "zero_one_loss",
    "confusion_matrix", "classification_report", "precision_recall_fscore_support"})
VALUE_METRICS = frozenset({
    "r2_score", "mean_squared_error", "root_mean_squared_error", "mean_absolute_error", "median_absolute_error",
    "explained_variance_score", "max_error", "mean_absolute_percentage_error"})
MAX_SCORED_PAIRS = 20  # pictures of (model, dataset) pairs per run: a loop over datasets stays bounded


def draw_scored(call: TrackedCall, model: str, data: str | None) -> None:
    """The first time the script scores ``model``'s prediction on the dataset ``data``
    with a score of labels or of values, that dataset's pictures of the model (its
    confusion matrix, its residuals): the targets and the prediction go to the uploader,
    which draws them. One set lookup for every later score of the same pair."""
    state = call.run.state(draw_scored)
    if not state.get("on"):
        return  # TrainingScores is off, or its pictures are
    function = call.name
    task = "classifier" if function in LABEL_METRICS else "regressor" if function in VALUE_METRICS else None
    if task is None or data is None:
        return
    drawn: set[tuple[str, str]] = state.setdefault("pairs", set())
    if (model, data) in drawn or len(drawn) >= MAX_SCORED_PAIRS:
        return
    drawn.add((model, data))
    truth = call.args[0] if call.args else call.kwargs.get("y_true")
    predicted = call.args[1] if len(call.args) > 1 else call.kwargs.get("y_pred")
    if truth is None or predicted is None:
        return
    call.run.writer.log_entry({
        "kind": "evaluation", "label": model, "task": task, "data": data, "prefix": data, "metrics": False,
        "pictures": True, "timestamp": int(time.time() * 1000),
    }, _npz(_at_most(MAX_ROWS, y_true=_plain(truth), y_pred=_plain(predicted))))


def _at_most(limit: int, **arrays: np.ndarray) -> dict[str, np.ndarray]:
    """The same seeded sample of at most ``limit`` rows of each array (all rows if fewer)."""
    rows = min((len(array) for array in arrays.values() if array.ndim), default=0)
    sample = sample_rows(rows, limit)
    return {name: array if sample is None or not array.ndim else array[sample] for name, array in arrays.items()}
