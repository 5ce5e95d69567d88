"""The uploader's part of a model's evaluation: the scores and pictures of what a model
predicted on a dataset (an "evaluation" entry of :class:`~pypads.loggers.training.TrainingScores`),
and the pictures of the model itself (its importances, scikit-learn's HTML view).

Computed here, not in the script: scikit-learn's metrics and matplotlib cost a second to
import and the pictures a few hundred milliseconds each, which the script's thread must
not pay. The uploader has a core of its own and computes them as the entries arrive, while
the script goes on; the files wait in a folder until the run's end says where each model's
page is (its child run, or the run itself).
"""

from __future__ import annotations

import io
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cloudpickle
import numpy as np

from pypads import evaluation
from pypads.uploader.reports import Warn

MAX_EVALUATIONS = 100  # models × datasets per run: a loop over many datasets stays bounded
_DEFAULT_SCORES = {"classifier": "accuracy_score", "regressor": "r2_score"}
_ARRAYS = ("y_true", "y_pred", "scores", "classes", "features")

ScoreLine = tuple[str, float, int, int, "str | None"]
"""``(key, value, timestamp, step, dataset name)``, as a model card's metrics."""


@dataclass
class ModelEvaluations:
    """What the uploader made of one model's evaluations."""

    metrics: dict[str, ScoreLine] = field(default_factory=dict)  # bare key -> its line
    folder: Path | None = None  # its pictures, uploaded as the run ends


class Evaluations:
    """The evaluations of one run's models, by model label."""

    def __init__(self, warn: Warn) -> None:
        self._warn = warn
        self.by_label: dict[str, ModelEvaluations] = {}
        self._count = 0

    def add(self, entry: dict[str, Any], content: bytes | None) -> list[ScoreLine]:
        """Score and draw one evaluation entry; returns its metrics as the run names them
        (``<label>.training_accuracy_score``)."""
        label = str(entry.get("label") or "")
        if not label or content is None or self._count >= MAX_EVALUATIONS:
            return []
        self._count += 1
        try:
            evaluated = _evaluation_of(entry, content)
        except (OSError, ValueError, KeyError, TypeError) as error:  # a damaged or hostile journal
            self._warn(f"evaluation:{label}", f"pypads could not read the evaluation of {label}: {error}")
            return []
        prefix = str(entry.get("prefix") or "training")
        timestamp, data = int(entry.get("timestamp") or 0), entry.get("data")
        values, warnings = evaluation.scores(evaluated)
        default = _DEFAULT_SCORES.get(str(entry.get("default_score")))
        if default in values:  # the estimator's score() is scikit-learn's: the accuracy or R² of predict()
            values["score"] = values[default]
        model = self.by_label.setdefault(label, ModelEvaluations())
        lines = []
        for name, value in values.items():
            key = f"{prefix}_{name}"
            model.metrics[key] = (key, value, timestamp, 0, None if data is None else str(data))
            lines.append((f"{label}.{key}", value, timestamp, 0, None if data is None else str(data)))
        if entry.get("pictures", True):
            files, skipped = evaluation.pictures(evaluated, prefix)
            self._keep(model, files)
            warnings += skipped
        for message in warnings:
            self._warn(f"evaluation:{label}:{message}", f"{label}: {message}")
        return lines

    def add_model(self, label: str, pickled: bytes) -> None:
        """The pictures of a saved model itself: importances or coefficients, and
        scikit-learn's HTML view (``estimator.html``)."""
        model = self.by_label.get(label)
        if model is None or model.folder is None:
            return  # only models whose evaluation asked for pictures
        try:
            estimator = cloudpickle.loads(pickled)  # the journal's own pickle: as trusted as the journal
        except Exception as error:  # a class that does not load here
            self._warn(f"estimator:{label}", f"{label}: no importances or estimator.html ({error})")
            return
        files, warnings = evaluation.importances(estimator, None)
        html = evaluation.estimator_html(estimator)
        if html is not None:
            files["estimator.html"] = html
        self._keep(model, files)
        for message in warnings:
            self._warn(f"estimator:{label}:{message}", f"{label}: {message}")

    def _keep(self, model: ModelEvaluations, files: dict[str, bytes]) -> None:
        if not files:
            return
        if model.folder is None:
            model.folder = Path(tempfile.mkdtemp(prefix="pypads-pictures-"))
        for name, content in files.items():
            (model.folder / Path(name).name).write_bytes(content)

    def with_scores(self, label: str, card: dict[str, Any] | None) -> dict[str, Any] | None:
        """``card`` (a model card or a child run's entry) with the model's training scores
        among its metrics, as ``[key, value, timestamp, step, dataset]``."""
        model = self.by_label.get(label)
        if model is None or not model.metrics:
            return card
        card = dict(card or {"model_label": label})
        card["metrics"] = [*card.get("metrics", []), *map(list, model.metrics.values())]
        return card

    def take_folders(self) -> dict[str, Path]:
        """Each model's folder of pictures, by label; the caller uploads and removes them."""
        folders = {label: model.folder for label, model in self.by_label.items() if model.folder is not None}
        for model in self.by_label.values():
            model.folder = None
        return folders


def _evaluation_of(entry: dict[str, Any], content: bytes) -> evaluation.Evaluation:
    """The entry's arrays, read without pickle: a journal is a file anyone with the
    folder's rights could have written."""
    with np.load(io.BytesIO(content), allow_pickle=False) as stored:
        arrays = {name: stored[name] for name in _ARRAYS if name in stored.files}
        inertia = float(stored["inertia"]) if "inertia" in stored.files else None
    task = str(entry.get("task"))
    if task not in ("classifier", "regressor", "clusterer"):
        raise ValueError(f"unknown task {task!r}")
    if "y_pred" not in arrays:
        raise KeyError("y_pred")
    return evaluation.Evaluation(task=task, y_true=arrays.get("y_true"), y_pred=arrays["y_pred"],
                                 scores=arrays.get("scores"), classes=arrays.get("classes"),
                                 features=arrays.get("features"), inertia=inertia, score=None)
