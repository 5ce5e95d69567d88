"""A model's pictures on its training data: what MLflow's sklearn autolog draws
(confusion matrix, ROC and precision-recall curves) and, for a regressor, residuals and
predicted against actual values. Each is at most 200 kB and takes well under a second,
however many rows the data has: scatter plots draw a fixed sample of at most 5000 points."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pypads.to_mlflow.evaluation.drawing import new_figure, png
from pypads.to_mlflow.evaluation.metrics import binary_column
from pypads.to_mlflow.evaluation.record import (
    Evaluation,
    array,
    class_labels,
    failed,
    file_name,
    not_finite,
    sample_rows,
    skipped,
)

MATRIX_CLASSES = 50  # beyond this a confusion matrix is unreadable (and 10,000² cells are 800 MB)
MATRIX_NUMBERS = 20  # up to this many classes each cell shows its count as a number
CURVE_CLASSES = 10  # one-vs-rest curves for more classes than this are a tangle
SCATTER_POINTS = 5000
CURVE_POINTS = 1000  # a curve's points drawn, at most: a 640-pixel plot shows no more, and 100,000 take a second
CLUSTER_BARS = 50


class Drawn:
    """The pictures drawn so far, and a warning per one that was not.

    ``paint=False`` only decides which pictures there will be (an empty file each) and
    why the others are skipped: cheap, so those warnings reach the script before it
    exits, while the drawing itself waits until it has gone.
    """

    def __init__(self, prefix: str, paint: bool = True) -> None:
        self.prefix = prefix
        self.paint = paint
        self.files: dict[str, bytes] = {}
        self.warnings: list[str] = []

    def draw(self, kind: str, paint: Callable[[Any], None], width: float = 6.4, height: float = 4.8,
             fixed_margins: bool = False) -> None:
        """``paint`` on a new figure, kept as ``{prefix}_{kind}.png``; an exception is a warning."""
        name = file_name(self.prefix, kind, "png")
        if not self.paint:
            self.files[name] = b""
            return
        try:
            figure = new_figure(width, height, fixed_margins)
            paint(figure)
            self.files[name] = png(figure)
        except Exception as error:  # a picture's failure must not cost the others
            self.warnings.append(failed(name, error))

    def skip(self, kind: str, reason: str) -> None:
        self.warnings.append(skipped(file_name(self.prefix, kind, "png"), reason))


def pictures(evaluation: Evaluation, prefix: str, paint: bool = True) -> tuple[dict[str, bytes], list[str]]:
    """File name (f"{prefix}_confusion_matrix.png" ...) -> PNG bytes, and a warning per
    picture skipped (``paint=False``: empty files, see :class:`Drawn`)."""
    drawn = Drawn(prefix, paint)
    try:
        if evaluation.task == "classifier":
            classifier_pictures(evaluation, drawn)
        elif evaluation.task == "regressor":
            regressor_pictures(evaluation, drawn)
        elif evaluation.task == "clusterer":
            clusterer_pictures(evaluation, drawn)
        else:
            drawn.skip("pictures", f"unknown task {evaluation.task!r}")
    except Exception as error:  # never raise for bad data: what was drawn still counts
        drawn.warnings.append(failed(file_name(prefix, "pictures", "png"), error))
    return drawn.files, drawn.warnings


def classifier_pictures(evaluation: Evaluation, drawn: Drawn) -> None:
    if evaluation.y_true is None:
        drawn.skip("confusion_matrix", "no targets (y_true) were recorded")
        return
    y_true, y_pred = array(evaluation.y_true).ravel(), array(evaluation.y_pred).ravel()
    classes = class_labels(evaluation, y_true, y_pred)
    if not_finite(y_true) or not_finite(y_pred):
        drawn.skip("confusion_matrix", "the targets or predictions hold NaN, infinite or missing values")
    elif len(classes) > MATRIX_CLASSES:
        drawn.skip("confusion_matrix", f"{len(classes)} classes, more than {MATRIX_CLASSES} fit in a picture")
    else:
        drawn.draw("confusion_matrix", lambda figure: confusion_matrix(figure, y_true, y_pred, classes),
                   *matrix_size(len(classes)))
    if evaluation.scores is not None:
        curves(y_true, array(evaluation.scores), classes, drawn)


def matrix_size(classes: int) -> tuple[float, float]:
    side = min(4.0 + 0.2 * classes, 9.0)
    return side + 1.0, side


def confusion_matrix(figure: Any, y_true: NDArray[Any], y_pred: NDArray[Any], classes: NDArray[Any]) -> None:
    from sklearn.metrics import confusion_matrix as counts_of

    counts = counts_of(y_true, y_pred, labels=classes)
    axes = figure.add_subplot()
    image = axes.imshow(counts, cmap="Blues", interpolation="nearest")
    figure.colorbar(image, ax=axes, label="samples")
    labels = [str(label) for label in classes]
    slanted = len(classes) > 3  # long labels side by side would overlap
    axes.set_xticks(range(len(classes)), labels, rotation=45 if slanted else 0, ha="right" if slanted else "center")
    axes.set_yticks(range(len(classes)), labels)
    axes.set_xlabel("predicted class")
    axes.set_ylabel("true class")
    axes.set_title(f"Confusion matrix ({len(y_true)} samples)")
    if len(classes) <= MATRIX_NUMBERS:
        threshold = counts.max() / 2 if counts.size else 0
        for row, column in np.ndindex(counts.shape):
            axes.text(column, row, str(counts[row, column]), ha="center", va="center", fontsize=8,
                      color="white" if counts[row, column] > threshold else "black")


def curves(y_true: NDArray[Any], scores: NDArray[Any], classes: NDArray[Any], drawn: Drawn) -> None:
    """ROC and precision-recall curves: one for a binary model, one per class (one against
    the rest) for a multi-class model with probabilities."""
    if not_finite(y_true) or not_finite(scores):
        reason = "the targets or the scores hold NaN, infinite or missing values"
        drawn.skip("roc_curve", reason)
        drawn.skip("precision_recall_curve", reason)
        return
    if len(classes) == 2:
        positive = binary_column(scores)
        if positive is None:
            drawn.skip("roc_curve", f"scores of shape {scores.shape} are not one score per row")
            return
        series = [(str(classes[1]), y_true == classes[1], positive)]
    elif len(classes) > CURVE_CLASSES:
        drawn.skip("roc_curve", f"{len(classes)} classes, more than {CURVE_CLASSES} curves in a picture")
        drawn.skip("precision_recall_curve", f"{len(classes)} classes, more than {CURVE_CLASSES} curves in a picture")
        return
    elif scores.ndim != 2 or scores.shape[1] != len(classes):
        drawn.skip("roc_curve", f"scores of shape {scores.shape} for {len(classes)} classes")
        drawn.skip("precision_recall_curve", f"scores of shape {scores.shape} for {len(classes)} classes")
        return
    else:
        series = [(str(label), y_true == label, scores[:, column]) for column, label in enumerate(classes)]
    # a class no target belongs to (or every target does) has no ROC curve
    defined = [(label, truth, score) for label, truth, score in series if 0 < truth.sum() < len(truth)]
    if not defined:
        drawn.skip("roc_curve", "the targets hold only one class, for which ROC is not defined")
    else:
        drawn.draw("roc_curve", lambda figure: roc_curves(figure, defined, len(classes) == 2), fixed_margins=True)
    with_positives = [(label, truth, score) for label, truth, score in series if truth.any()]
    if not with_positives:
        drawn.skip("precision_recall_curve", "no target belongs to the positive class")
    else:
        drawn.draw("precision_recall_curve", lambda figure: precision_recall_curves(figure, with_positives, len(classes) == 2),
                   fixed_margins=True)


def thinned(count: int) -> NDArray[Any]:
    """At most CURVE_POINTS indices out of ``count``, evenly spread, the first and last kept."""
    if count <= CURVE_POINTS:
        return np.arange(count)
    indices: NDArray[Any] = np.unique(np.linspace(0, count - 1, CURVE_POINTS).round().astype(int))
    return indices


def roc_curves(figure: Any, series: list[tuple[str, NDArray[Any], NDArray[Any]]], binary: bool) -> None:
    from sklearn.metrics import auc, roc_curve

    axes = figure.add_subplot()
    for label, truth, score in series:
        false_positives, true_positives, _ = roc_curve(truth, score)
        area = auc(false_positives, true_positives)  # from the whole curve, before thinning
        name = f"AUC = {area:.3f}" if binary else f"{label} (AUC = {area:.3f})"
        points = thinned(len(false_positives))
        axes.plot(false_positives[points], true_positives[points], label=name)
    axes.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1, label="chance")
    axes.set_xlabel("false positive rate")
    axes.set_ylabel("true positive rate")
    axes.set_title(f"ROC curve (positive class: {series[0][0]})" if binary else "ROC curves, one class against the rest")
    axes.legend(loc="lower right", fontsize=8)


def precision_recall_curves(figure: Any, series: list[tuple[str, NDArray[Any], NDArray[Any]]], binary: bool) -> None:
    from sklearn.metrics import precision_recall_curve

    axes = figure.add_subplot()
    for label, truth, score in series:
        precision, recall, _ = precision_recall_curve(truth, score)
        # average precision, as average_precision_score defines it, from the curve at hand
        # rather than by sorting the scores a second time
        average = float(-np.sum(np.diff(recall) * precision[:-1]))
        name = f"AP = {average:.3f}" if binary else f"{label} (AP = {average:.3f})"
        points = thinned(len(recall))
        axes.plot(recall[points], precision[points], label=name, drawstyle="steps-post")
    axes.set_xlabel("recall")
    axes.set_ylabel("precision")
    axes.set_ylim(0, 1.05)
    axes.set_title(f"Precision-recall curve (positive class: {series[0][0]})" if binary
                   else "Precision-recall curves, one class against the rest")
    axes.legend(loc="lower left", fontsize=8)


def regressor_pictures(evaluation: Evaluation, drawn: Drawn) -> None:
    if evaluation.y_true is None:
        drawn.skip("residuals", "no targets (y_true) were recorded")
        drawn.skip("predicted_vs_actual", "no targets (y_true) were recorded")
        return
    y_true = np.asarray(evaluation.y_true, dtype=float).ravel()
    y_pred = np.asarray(evaluation.y_pred, dtype=float).ravel()
    if len(y_true) != len(y_pred):
        reason = f"{len(y_true)} targets for {len(y_pred)} predictions"
        drawn.skip("residuals", reason)
        drawn.skip("predicted_vs_actual", reason)
        return
    finite = np.isfinite(y_true) & np.isfinite(y_pred)
    if not finite.all():
        # the finite points still tell the story; the warning says how many are missing
        drawn.warnings.append(f"{file_name(drawn.prefix, 'residuals', 'png')} and "
                              f"{file_name(drawn.prefix, 'predicted_vs_actual', 'png')}: "
                              f"{int((~finite).sum())} of {len(finite)} points left out, not finite")
        y_true, y_pred = y_true[finite], y_pred[finite]
    if len(y_true) == 0:
        drawn.skip("residuals", "no finite points")
        drawn.skip("predicted_vs_actual", "no finite points")
        return
    total = len(y_true)
    rows = sample_rows(total, SCATTER_POINTS)
    if rows is not None:
        y_true, y_pred = y_true[rows], y_pred[rows]
    shown = "" if rows is None else f" ({len(rows)} of {total} points)"
    drawn.draw("residuals", lambda figure: residuals(figure, y_true, y_pred, shown))
    drawn.draw("predicted_vs_actual", lambda figure: predicted_vs_actual(figure, y_true, y_pred, shown))


def scatter(axes: Any, x: NDArray[Any], y: NDArray[Any]) -> None:
    # rasterized: thousands of markers as one image, not thousands of paths
    axes.scatter(x, y, s=8, alpha=0.5 if len(x) > 500 else 0.8, edgecolors="none", rasterized=True)


def residuals(figure: Any, y_true: NDArray[Any], y_pred: NDArray[Any], shown: str) -> None:
    axes = figure.add_subplot()
    scatter(axes, y_pred, y_true - y_pred)
    axes.axhline(0, color="grey", linestyle="--", linewidth=1)
    axes.set_xlabel("predicted value")
    axes.set_ylabel("residual (actual - predicted)")
    axes.set_title(f"Residuals{shown}")


def predicted_vs_actual(figure: Any, y_true: NDArray[Any], y_pred: NDArray[Any], shown: str) -> None:
    axes = figure.add_subplot()
    scatter(axes, y_true, y_pred)
    low, high = float(min(y_true.min(), y_pred.min())), float(max(y_true.max(), y_pred.max()))
    axes.plot([low, high], [low, high], color="grey", linestyle="--", linewidth=1, label="predicted = actual")
    axes.set_xlabel("actual value")
    axes.set_ylabel("predicted value")
    axes.set_title(f"Predicted against actual{shown}")
    axes.legend(loc="upper left", fontsize=8)


def clusterer_pictures(evaluation: Evaluation, drawn: Drawn) -> None:
    labels = array(evaluation.y_pred).ravel()
    if not_finite(labels):
        drawn.skip("cluster_sizes", "the cluster labels hold NaN, infinite or missing values")
        return
    names, sizes = np.unique(labels, return_counts=True)
    if len(names) > CLUSTER_BARS:
        drawn.skip("cluster_sizes", f"{len(names)} clusters, more than {CLUSTER_BARS} bars in a picture")
        return
    drawn.draw("cluster_sizes", lambda figure: cluster_sizes(figure, [str(name) for name in names], sizes))


def cluster_sizes(figure: Any, names: list[str], sizes: NDArray[Any]) -> None:
    axes = figure.add_subplot()
    axes.bar(range(len(names)), sizes)
    axes.set_xticks(range(len(names)), names, rotation=45 if len(names) > 10 else 0)
    axes.set_xlabel("cluster")
    axes.set_ylabel("samples")
    axes.set_title(f"Cluster sizes ({int(sizes.sum())} samples)")
