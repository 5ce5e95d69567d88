"""Metric: the results of scoring functions as MLflow metrics, named by model and data."""

from __future__ import annotations

import json
import numbers
import time
from collections.abc import Mapping
from typing import Any

from pypads.core import Logger, is_estimator
from pypads.recording.content.lineage import Lineage, Origin, first_data, lineage
from pypads.recording.content.serialize import WriteFormats, serialize
from pypads.recording.loggers.comparison import Score, rows
from pypads.recording.loggers.training import draw_scored
from pypads.recording.provenance import provenance
from pypads.run import TrackedCall

METRIC_HOOK = "pypads_metric"
CROSS_VALIDATION_HOOK = "pypads_cross_validate"


class Metric(Logger):
    """Each scoring call's result in a series of its own kind, step = 0, 1, 2… within it (a
    value computed once is at step 0).

    - **The user's own call** (made by the script, not by a library): the series is
      ``<model>.<function>_<data>``. ``<model>`` is the label of the estimator whose
      prediction is scored (its class name, ``<Class>_1`` for a second instance of the
      class), known from the pipeline's data edges; ``<data>`` the script's variable
      name for the data that prediction was made on (``X_test``), else for the first
      argument (``y_test``). So ``accuracy_score(y_test, forest.predict(X_test))``
      gives ``RandomForestClassifier.accuracy_score_X_test``; unknown parts are left out
      (``accuracy_score_y`` scores no tracked prediction), and a prediction on the data
      the model was fitted on, with no name, gives ``<model>.training_<function>``.
    - **A score a library computes inside a tracked call** (a search's folds):
      ``<outer call>/test_<function>`` for held-out data, ``<outer call>/train_<function>``
      on the data the inner model was fitted on (``GridSearchCV.fit/test_accuracy_score``),
      step = the fold's index in the series (0 for the first).
    - Not logged again: a metric computed inside another metric call (``f1_score`` calls
      ``fbeta_score``), an implementation detail; and the folds of a ``cross_validate``
      or ``cross_val_score`` the script called, which the CrossValidation logger logs
      from its result (``cv_<Estimator>_<score>``, with the mean).

    A result that is not a number becomes the artifact ``metrics/<series>/<step>.<ext>``:
    text (``classification_report``) as the text it is, a dict as JSON, anything else
    as its text form.
    """

    defaults = {"max_bytes": 1_000_000}

    def post(self, call: TrackedCall, before: None, options: Mapping[str, Any]) -> None:
        if call.exception is not None or (call.parent is not None and _logged_elsewhere(call)):
            return
        known = lineage(call.run)
        origin = None
        if call.depth == 0:
            series, origin = _user_series(known, call)
        else:
            series = _library_series(known, call)
        step = known.next_step(series)
        value = call.result
        # float first: most scores are (numpy's float64 is one), and the check of the
        # numbers.Real ABC costs microseconds on a path that runs on every call.
        if isinstance(value, float) or (isinstance(value, numbers.Real) and not isinstance(value, bool)):
            if origin is None or origin.model is None:
                call.run.writer.log_metric(series, float(value), step)
                return
            # A score of a model: its page shows it too, with the same timestamp (MLflow
            # then keeps one point in the run's history for both).
            now = int(time.time() * 1000)
            call.run.writer.log_metric(series, float(value), step=step, timestamp=now)
            rows(call.run).scored(origin.model, series[len(origin.model) + 1:], Score(float(value), step, now, origin.data))
            draw_scored(call, origin.model, origin.data)  # that dataset's pictures of the model, once
            return
        described = lambda: provenance(self.name, call.run.mappings, call.function)  # noqa: E731 - only built for a summary
        extension, content = _artifact(value, options["max_bytes"], described)
        call.run.writer.log_bytes(f"metrics/{series}/{step}.{extension}", content)


def _user_series(known: Lineage, call: TrackedCall) -> tuple[str, Origin | None]:
    """The series of a metric the script computed, and the origin of what it scored."""
    args, kwargs = call.args, call.kwargs
    origin = known.origin_of(args) or (known.origin_of(tuple(kwargs.values())) if kwargs else None)
    data = origin.data if origin is not None else None
    if data is None:
        # A function's first argument, as first_data finds it, without its frame: a metric in a loop
        value, position = (args[0], 0) if args and call.instance is None else first_data(args, kwargs, call.instance)
        data = known.caller_name(value, position) if value is not None else None
    return _series_name(call.name, origin, data), origin


_NAMES: dict[tuple[str, Origin | None, str | None], str] = {}


def _series_name(function: str, origin: Origin | None, data: str | None) -> str:
    key = (function, origin, data)
    name = _NAMES.get(key)
    if name is None:
        name = function
        if data is not None:
            name = f"{name}_{data}"
        elif origin is not None and origin.training:
            name = f"training_{name}"
        if origin is not None and origin.model is not None:
            name = f"{origin.model}.{name}"
        if len(_NAMES) < 10_000:  # bounded: names are few, but a script could make many
            _NAMES[key] = name
    return name


def _library_series(known: Lineage, call: TrackedCall) -> str:
    root = call.outermost
    origin = known.origin_of(call.args) or known.origin_of(tuple(call.kwargs.values()))
    kind = "" if origin is None else "train_" if origin.training else "test_"
    return f"{_outer_name(known, root)}/{kind}{call.name}"


def _outer_name(known: Lineage, root: TrackedCall) -> str:
    """``GridSearchCV.fit``, ``GridSearchCV_1.fit`` for a second search, or
    ``Ridge.cross_validate`` for a function given an estimator."""
    if root.instance is not None:
        kind = type(root.instance).__name__
        return known.label(root.instance) + root.name[len(kind):] if root.name.startswith(kind) else root.name
    estimator = root.args[0] if root.args else root.kwargs.get("estimator")
    if is_estimator(estimator):
        return f"{known.label(estimator)}.{root.name}"
    return root.name


def _artifact(value: Any, max_bytes: int, origin: Any) -> tuple[str, bytes]:
    if isinstance(value, str) and len(value) <= max_bytes:
        return "txt", value.encode("utf-8")
    if isinstance(value, dict):
        try:
            text = json.dumps(value, indent=2, default=float)
        except (TypeError, ValueError):
            text = None
        if text is not None and len(text) <= max_bytes:
            return "json", text.encode("utf-8")
    return serialize(value, WriteFormats.text, max_bytes, origin)


def _logged_elsewhere(call: TrackedCall) -> bool:
    """Whether the score is part of another call's: computed inside a metric (an
    implementation detail of it), or a fold of a cross-validation the script called
    (the CrossValidation logger logs every fold from its result, with scikit-learn's
    names and the mean)."""
    parent = call.parent
    while parent is not None:
        if METRIC_HOOK in parent.hooks or (parent.parent is None and CROSS_VALIDATION_HOOK in parent.hooks):
            return True
        parent = parent.parent
    return False
