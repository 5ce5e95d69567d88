"""The uploader's part of a model's evaluation: the scores and pictures of what a model
predicted on a dataset (an "evaluation" entry of :class:`~pypads.recording.loggers.training.TrainingScores`),
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cloudpickle
import numpy as np
from blake3 import blake3

from pypads.to_mlflow import evaluation
from pypads.to_mlflow.uploader.reports import Warn

MAX_EVALUATIONS = 100  # models × datasets per run: a loop over many datasets stays bounded
_DEFAULT_SCORES = {"classifier": "accuracy_score", "regressor": "r2_score"}
_ARRAYS = ("y_true", "y_pred", "scores", "classes", "features")

ScoreLine = tuple[str, float, int, int, "str | None"]
"""``(key, value, timestamp, step, dataset name)``, as a model card's metrics."""


@dataclass
class ModelEvaluations:
    """What the uploader made of one model's evaluations."""

    metrics: dict[str, ScoreLine] = field(default_factory=dict)  # bare key -> its line
    undrawn: dict[str, Undrawn] = field(default_factory=dict)  # prefix -> the latest, not in the folder yet
    folder: Path | None = None  # its pictures, uploaded as the run ends


@dataclass(frozen=True)
class Undrawn:
    """An evaluation whose pictures are not in its model's folder yet."""

    evaluation: evaluation.Evaluation
    digest: bytes  # of its predictions and file names: equal predictions draw equal pictures


class Evaluations:
    """The evaluations of one run's models, by model label.

    Metrics are computed as each entry arrives. Pictures go only to models that have a
    page (a "model" entry: at most ``max_models``, a twin of a saved state not again),
    once per model and dataset for the latest evaluation: a loop of 100 fits would
    otherwise cost 100 sets of pictures; equal predictions (one tree fitted in a loop,
    each fit a model of its own) are drawn once.
    ``draw=False`` (an uploader on a thread of the script) draws none: matplotlib must
    not load into the script's process.
    """

    def __init__(self, warn: Warn, draw: bool = True) -> None:
        self._warn = warn
        self._draw = draw
        self.by_label: dict[str, ModelEvaluations] = {}
        self._count = 0
        self._scored: dict[bytes, tuple[dict[str, float], list[str]]] = {}  # content digest -> its scores
        self._drawn: dict[bytes, tuple[dict[str, bytes], list[str]]] = {}  # Undrawn.digest -> files, warnings
        self._said: set[str] = set()  # what plan() warned of

    def add(self, entry: dict[str, Any], content: bytes | None) -> list[ScoreLine]:
        """Score one evaluation entry (its pictures wait for :meth:`draw`); returns its
        metrics as the run names them (``<label>.training_accuracy_score``)."""
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
        model = self.by_label.setdefault(label, ModelEvaluations())
        if self._draw and entry.get("pictures", True):
            model.undrawn[prefix] = Undrawn(evaluated, blake3(content + f"{evaluated.task}:{prefix}".encode()).digest())
        if entry.get("metrics") is False:  # a dataset the script scored itself: its pictures only
            return []
        values, warnings = self._scores(evaluated, content, entry)
        for message in warnings:
            self._warn(f"evaluation:{label}:{message}", f"{label}: {message}")
        timestamp, data = int(entry.get("timestamp") or 0), entry.get("data")
        dataset = None if data is None else str(data)
        lines = []
        for name, value in values.items():
            key = f"{prefix}_{name}"
            model.metrics[key] = (key, value, timestamp, 0, dataset)
            lines.append((f"{label}.{key}", value, timestamp, 0, dataset))
        return lines

    def _scores(self, evaluated: evaluation.Evaluation, content: bytes,
                entry: dict[str, Any]) -> tuple[dict[str, float], list[str]]:
        """The scores of ``evaluated``; computed once for equal predictions (100 fits of
        one tree in a loop predict alike)."""
        digest = blake3(content + f"{entry.get('task')}:{entry.get('default_score')}".encode()).digest()
        found = self._scored.get(digest)
        if found is None:
            values, warnings = evaluation.scores(evaluated)
            default = _DEFAULT_SCORES.get(str(entry.get("default_score")))
            if default in values:  # the estimator's score() is scikit-learn's: the accuracy or R² of predict()
                values["score"] = values[default]
            found = self._scored[digest] = (values, warnings)
        return dict(found[0]), list(found[1])

    def plan(self, labels: set[str]) -> None:
        """Warn now of each picture of the models labelled ``labels`` that will be skipped,
        and why: :meth:`draw` draws them once the script has gone, too late to tell it."""
        for label in labels:
            model = self.by_label.get(label)
            for prefix, undrawn in (model.undrawn.items() if model is not None else ()):
                _, warnings = evaluation.pictures(undrawn.evaluation, prefix, paint=False)
                for message in warnings:
                    self._said.add(f"{label}: {message}")
                    self._warn(f"pictures:{label}:{message}", f"{label}: {message}")

    def draw(self, labels: set[str], between: Callable[[], object] = lambda: None) -> list[str]:
        """Put the pictures of the models labelled ``labels`` (those with a page) in their
        folders, drawing what is not drawn yet; returns what failed that :meth:`plan` did
        not say already. ``between`` is called before each dataset's pictures of a model."""
        failures = []
        for label in labels:
            model = self.by_label.get(label)
            while model is not None and model.undrawn:
                between()
                prefix, undrawn = model.undrawn.popitem()
                files, warnings = self._pictures(undrawn, prefix)
                self._keep(model, files)
                failures += [f"{label}: {message}" for message in warnings if f"{label}: {message}" not in self._said]
        return failures

    def _pictures(self, undrawn: Undrawn, prefix: str) -> tuple[dict[str, bytes], list[str]]:
        found = self._drawn.get(undrawn.digest)
        if found is None:
            found = self._drawn[undrawn.digest] = evaluation.pictures(undrawn.evaluation, prefix)
        return found

    def add_model(self, label: str, pickled: bytes) -> list[str]:
        """The pictures of a saved model itself: importances or coefficients, and
        scikit-learn's HTML view (``estimator.html``); returns what failed."""
        model = self.by_label.get(label)
        if not self._draw or model is None:
            return []  # only models that were evaluated: a classifier, regressor or clusterer
        try:
            estimator = cloudpickle.loads(pickled)  # the journal's own pickle: as trusted as the journal
        except Exception as error:  # a class that does not load here
            return [f"{label}: no importances or estimator.html ({error})"]
        files, warnings = evaluation.importances(estimator, None)
        html = evaluation.estimator_html(estimator)
        if html is not None:
            files["estimator.html"] = html
        self._keep(model, files)
        return [f"{label}: {message}" for message in warnings]

    def add_chart(self, entry: dict[str, Any], table: bytes) -> list[str]:
        """A chart of a CSV table a mapping file's reading logged (a booster's importance:
        the top 20 rows by one column), ``<name>.png`` among the pictures of the model
        labelled as the entry says; returns what failed."""
        label, name, column = (str(entry.get(key) or "") for key in ("label", "name", "column"))
        if not self._draw or not label or not name:
            return []
        try:
            picture = evaluation.table_chart(table, column, f"{label}: {name} ({column})")
        except Exception as error:  # a damaged table, or one without the column
            return [f"{label}: {name}.png: failed, {type(error).__name__}: {error}"]
        self._keep(self.by_label.setdefault(label, ModelEvaluations()), {f"{name}.png": picture})
        return []

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
