"""What the script's process recorded of one model on one dataset, and the checks every
score and picture makes of it before use."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

TASKS = ("classifier", "regressor", "clusterer")


@dataclass(frozen=True)
class Evaluation:
    """What the script's process recorded of one model on one dataset.

    Arrays may arrive as pandas Series or lists too: every reader goes through
    :func:`array` rather than trusting the annotation."""

    task: str  # "classifier" | "regressor" | "clusterer"
    y_true: NDArray[Any] | None  # targets (None for a clusterer without y)
    y_pred: NDArray[Any]  # estimator.predict(X) (cluster labels for a clusterer)
    # predict_proba (n, k) if the model has it, else decision_function ((n,) binary or (n, k)), else None
    scores: NDArray[Any] | None = None
    classes: NDArray[Any] | None = None  # estimator.classes_ (the column order of scores)
    features: NDArray[Any] | None = None  # a numeric sample of X (clusterer: silhouette)
    inertia: float | None = None  # KMeans-like inertia_
    score: float | None = None  # estimator.score(X, y) if the script's process computed it


def array(values: Any) -> NDArray[Any]:
    """``values`` as a numpy array: a pandas Series or DataFrame gives its values, not its
    index (``np.asarray`` does that already, and keeps string and bool labels as they are)."""
    return np.asarray(values)


def not_finite(values: NDArray[Any]) -> bool:
    """Whether ``values`` holds a NaN, an infinity or a missing value (None in an object
    array): a metric on it would be NaN or raise, so it is skipped instead."""
    if values.dtype.kind in "fc":
        return not bool(np.isfinite(values).all())
    if values.dtype.kind == "O":
        return any(value is None or (isinstance(value, float) and not np.isfinite(value)) for value in values.flat)
    return False


def class_labels(evaluation: Evaluation, y_true: NDArray[Any], y_pred: NDArray[Any]) -> NDArray[Any]:
    """The classes in the model's order (the columns of its scores), else the sorted labels
    seen in the targets and the predictions, as scikit-learn orders ``classes_``."""
    if evaluation.classes is not None:
        return array(evaluation.classes)
    labels: NDArray[Any] = np.unique(np.concatenate([y_true.ravel(), y_pred.ravel()]))
    return labels


def skipped(name: str, reason: str) -> str:
    return f"{name}: skipped, {reason}"


def failed(name: str, error: BaseException) -> str:
    return f"{name}: failed, {type(error).__name__}: {error}"


def sample_rows(count: int, limit: int) -> NDArray[Any] | None:
    """At most ``limit`` row indices out of ``count``, the same ones on every call (a fixed
    seed: two runs of one script give the same picture), in order; None if all fit."""
    if count <= limit:
        return None
    return np.sort(np.random.default_rng(0).choice(count, size=limit, replace=False))


def file_name(prefix: str, kind: str, suffix: str) -> str:
    return f"{prefix}_{kind}.{suffix}" if prefix else f"{kind}.{suffix}"


def names_or_default(names: Sequence[str] | None, count: int) -> list[str] | None:
    """``names`` as strings if there is one per value, else None."""
    if names is None:
        return None
    listed = [str(name) for name in names]
    return listed if len(listed) == count else None
