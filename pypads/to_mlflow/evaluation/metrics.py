"""A model's training scores, named as MLflow's sklearn autolog names them (without its
``training_`` prefix, which the caller adds), so a pypads run and an autolog run compare
metric by metric.

A metric that cannot be computed from the data (NaN predictions, one class in the
targets, an exception) is a warning naming it; one the model's kind of output does not
allow (``log_loss`` without probabilities, ``roc_auc`` without scores (autolog's name for ROC AUC)) is simply
absent, as in autolog: that is the model's nature, not a problem with the run."""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pypads.to_mlflow.evaluation.record import Evaluation, array, class_labels, failed, not_finite, sample_rows, skipped

SILHOUETTE_ROWS = 2000  # silhouette_score is quadratic in its rows: 2000 take about 50 ms
MANY_CLASSES = 1000  # beyond this, one-vs-rest AUC (a curve per class) and sklearn's log_loss take seconds
NOT_FINITE = "the targets or predictions hold NaN, infinite or missing values"


class Found:
    """The metrics computed so far, and a warning per one that was not."""

    def __init__(self) -> None:
        self.values: dict[str, float] = {}
        self.warnings: list[str] = []

    def measure(self, name: str, compute: Callable[[], Any]) -> None:
        """``compute()`` as the metric ``name``; an exception or a value that is not a
        finite number is a warning instead."""
        try:
            value = compute()
        except Exception as error:  # a metric's failure must not cost the others
            self.warnings.append(failed(name, error))
            return
        self._keep(name, value)

    def measure_together(self, names: tuple[str, ...], compute: Callable[[], Any]) -> None:
        """The values ``compute()`` gives, one per name, each kept as :meth:`measure`
        keeps it; an exception is a warning for each."""
        try:
            values = tuple(compute())
        except Exception as error:
            self.warnings += [failed(name, error) for name in names]
            return
        for name, value in zip(names, values):
            self._keep(name, value)

    def _keep(self, name: str, value: Any) -> None:
        try:
            number = float(value)
        except Exception as error:  # not a number (None, an array)
            self.warnings.append(failed(name, error))
            return
        if math.isfinite(number):
            self.values[name] = number
        else:
            self.warnings.append(skipped(name, f"its value is {number}"))

    def skip(self, name: str, reason: str) -> None:
        self.warnings.append(skipped(name, reason))


def scores(evaluation: Evaluation) -> tuple[dict[str, float], list[str]]:
    """Metric name -> value, and a warning per metric that could not be computed (naming it and why)."""
    found = Found()
    try:
        if evaluation.task == "classifier":
            classifier_scores(evaluation, found)
        elif evaluation.task == "regressor":
            regressor_scores(evaluation, found)
        elif evaluation.task == "clusterer":
            clusterer_scores(evaluation, found)
        else:
            found.skip("scores", f"unknown task {evaluation.task!r}")
    except Exception as error:  # never raise for bad data: what was computed still counts
        found.warnings.append(failed("scores", error))
    if evaluation.score is not None:
        found.measure("score", lambda: evaluation.score)
    return found.values, found.warnings


def classifier_scores(evaluation: Evaluation, found: Found) -> None:
    # Imported here, not at the top: see the package's docstring (import cost).
    from sklearn import metrics

    if evaluation.y_true is None:
        found.skip("classifier metrics", "no targets (y_true) were recorded")
        return
    y_true, y_pred = array(evaluation.y_true), array(evaluation.y_pred)
    classes = class_labels(evaluation, y_true, y_pred)
    # autolog's choice: the positive class of a binary model is its second class
    averaging: dict[str, Any] = {"average": "binary", "pos_label": classes[1]} if len(classes) == 2 else {"average": "weighted"}
    labels_finite = not (not_finite(y_true) or not_finite(y_pred))
    if labels_finite:
        found.measure("accuracy_score", lambda: metrics.accuracy_score(y_true, y_pred))
    else:
        found.skip("accuracy_score", NOT_FINITE)
    # One call for the three: each of precision_score, recall_score and f1_score computes
    # all of them (and validates its arguments), a third of a model's training scores.
    names = ("precision_score", "recall_score", "f1_score")
    if labels_finite:
        found.measure_together(names, lambda: metrics.precision_recall_fscore_support(
            y_true, y_pred, zero_division=0, **averaging)[:3])
    else:
        for name in names:
            found.skip(name, NOT_FINITE)
    if evaluation.scores is not None:
        probability_scores(y_true, array(evaluation.scores), classes, found)


def are_probabilities(scores: NDArray[Any], classes: NDArray[Any]) -> bool:
    """Whether ``scores`` are predict_proba's rows (one column per class, each row summing
    to 1) rather than a decision function's margins."""
    return (scores.ndim == 2 and scores.shape[1] == len(classes) and scores.dtype.kind in "fiu"
            and bool((scores >= 0).all() and (scores <= 1).all())
            and bool(np.allclose(scores.sum(axis=1), 1.0, atol=1e-4)))


def probability_scores(y_true: NDArray[Any], scores: NDArray[Any], classes: NDArray[Any], found: Found) -> None:
    from sklearn import metrics

    if not_finite(y_true) or not_finite(scores):
        reason = "the targets or the scores hold NaN, infinite or missing values"
        found.skip("log_loss", reason)
        found.skip("roc_auc", reason)
        return
    probabilities = are_probabilities(scores, classes)
    if probabilities and len(classes) <= MANY_CLASSES:
        found.measure("log_loss", lambda: metrics.log_loss(y_true, scores, labels=classes))
    elif probabilities:
        found.measure("log_loss", lambda: log_loss_of_many_classes(y_true, scores, classes))
    if len(np.unique(y_true)) < 2:
        found.skip("roc_auc", "the targets hold only one class, for which ROC AUC is not defined")
    elif len(classes) == 2:
        positive = binary_column(scores)
        if positive is None:
            found.skip("roc_auc", f"scores of shape {scores.shape} are not one score per row")
        else:
            found.measure("roc_auc", lambda: metrics.roc_auc_score(y_true == classes[1], positive))
    elif not probabilities:
        pass  # multi-class AUC needs probabilities; a decision function's margins are not (autolog skips it too)
    elif len(classes) > MANY_CLASSES:
        found.skip("roc_auc", f"{len(classes)} classes: one curve per class would take too long "
                                    f"(at most {MANY_CLASSES})")
    else:
        found.measure("roc_auc", lambda: metrics.roc_auc_score(
            y_true, scores, multi_class="ovr", average="weighted", labels=classes))


def log_loss_of_many_classes(y_true: NDArray[Any], probabilities: NDArray[Any], classes: NDArray[Any]) -> float:
    """sklearn's log_loss, from each row's probability of its true class alone: sklearn
    one-hot encodes the targets first, which for 2000 rows of 10,000 classes took 6 s and
    900 MB. Clipped as sklearn clips, to [eps, 1 - eps] of the scores' float type."""
    order = np.argsort(classes, kind="stable")
    positions = np.searchsorted(classes, y_true, sorter=order)
    positions = order[np.minimum(positions, len(classes) - 1)]
    if not (classes[positions] == y_true).all():
        raise ValueError("the targets hold labels that are not among the model's classes")
    eps = np.finfo(probabilities.dtype if probabilities.dtype.kind == "f" else np.float64).eps
    chosen = np.clip(probabilities[np.arange(len(y_true)), positions].astype(float), eps, 1 - eps)
    return float(-np.log(chosen).mean())


def binary_column(scores: NDArray[Any]) -> NDArray[Any] | None:
    """A binary model's score for its positive (second) class: predict_proba's second
    column, or the decision function itself."""
    if scores.ndim == 1:
        return scores
    if scores.ndim == 2 and scores.shape[1] == 2:
        return scores[:, 1]
    if scores.ndim == 2 and scores.shape[1] == 1:
        return scores[:, 0]
    return None


def regressor_scores(evaluation: Evaluation, found: Found) -> None:
    from sklearn import metrics

    names = ("mean_squared_error", "root_mean_squared_error", "mean_absolute_error", "r2_score")
    if evaluation.y_true is None:
        for name in names:
            found.skip(name, "no targets (y_true) were recorded")
        return
    y_true, y_pred = array(evaluation.y_true), array(evaluation.y_pred)
    if not_finite(y_true) or not_finite(y_pred):
        for name in names:
            found.skip(name, NOT_FINITE)
        return
    found.measure("mean_squared_error", lambda: metrics.mean_squared_error(y_true, y_pred))
    # root_mean_squared_error is scikit-learn 1.4's; before it, the root of the mean square
    root = getattr(metrics, "root_mean_squared_error", None)
    found.measure("root_mean_squared_error", lambda: root(y_true, y_pred) if root is not None
                  else math.sqrt(metrics.mean_squared_error(y_true, y_pred)))
    found.measure("mean_absolute_error", lambda: metrics.mean_absolute_error(y_true, y_pred))
    found.measure("r2_score", lambda: metrics.r2_score(y_true, y_pred))


def clusterer_scores(evaluation: Evaluation, found: Found) -> None:
    from sklearn import metrics

    if evaluation.inertia is not None:
        found.measure("inertia", lambda: evaluation.inertia)
    names = ("silhouette_score", "calinski_harabasz_score", "davies_bouldin_score")
    if evaluation.features is None:
        for name in names:
            found.skip(name, "no features (X) were recorded")
        return
    labels = array(evaluation.y_pred).ravel()
    features = np.asarray(evaluation.features, dtype=float)
    if features.ndim == 1:
        features = features.reshape(-1, 1)
    if len(features) != len(labels):
        for name in names:
            found.skip(name, f"{len(features)} rows of features for {len(labels)} cluster labels")
        return
    if not_finite(features) or not_finite(labels):
        for name in names:
            found.skip(name, "the features or the cluster labels hold NaN, infinite or missing values")
        return
    rows = sample_rows(len(labels), SILHOUETTE_ROWS)
    sampled_features, sampled_labels = (features, labels) if rows is None else (features[rows], labels[rows])
    for name, metric, x, y in (
            ("silhouette_score", metrics.silhouette_score, sampled_features, sampled_labels),
            ("calinski_harabasz_score", metrics.calinski_harabasz_score, features, labels),
            ("davies_bouldin_score", metrics.davies_bouldin_score, features, labels)):
        clusters = len(np.unique(y))
        if 2 <= clusters <= len(y) - 1:
            found.measure(name, partial(metric, x, y))
        else:
            found.skip(name, f"defined for 2 to n_samples - 1 clusters, found {clusters} in {len(y)} samples")


def import_ahead() -> None:
    """Import scikit-learn's metrics now: about 0.7 s (scipy's statistics most of it) that
    an uploader, idle while the script runs, had better spend then than at the run's
    end, when the script waits for the training scores. Never raises."""
    try:
        importlib.import_module("sklearn.metrics")
    except Exception:  # noqa: S110 - scoring says what is missing when it needs it
        pass
