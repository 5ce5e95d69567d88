"""Readings: what a mapping file says to read of a call (``"reading"`` of its entry), for
libraries whose training is no scikit-learn ``fit``: a native ``train``'s params, its
training curves and its single results (the best iteration).

Everything here comes from the mapping file, nothing from code per library: the file
names the arguments that are params, the values that are curves (``instance.evals_result()``,
``recorded``, ``result``) and how to have the library record its history
(``"record"``: XGBoost fills an ``evals_result`` dict, LightGBM appends to one through
the ``record_evaluation`` callback). See ``docs/mappings.md``.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import time
from collections.abc import Callable, Mapping
from typing import Any

from pypads.core import CallReading, Logger, Recorder, Source, redact, redact_params, resolve_loaded
from pypads.recording.content.lineage import lineage
from pypads.recording.loggers.comparison import Score, rows
from pypads.recording.loggers.parameters import log_params, param_text
from pypads.run import TrackedCall

_MISSING = object()


class Readings(Logger):
    """For a call whose mapping entry has a ``reading`` (at the script's own level):

    - **params**: the arguments it names, a mapping argument by its items
      (``xgboost.train(params={"max_depth": 3}, …)`` gives ``Booster.max_depth``), under
      the model's label as the Parameters logger logs an estimator's; a call with no
      model (``xgboost.cv``) under ``<library>.<function>`` (``xgboost.cv``, then
      ``xgboost.cv_2``);
    - **curves**: each per-step sequence as a metric series with the iteration as step,
      named by its keys (``XGBClassifier.validation_0.logloss``; a DataFrame's columns:
      ``xgboost.cv.test-logloss-mean``); a series longer than ``max_steps`` is thinned
      evenly, its last step kept. Its last value is also the model's score, on its page
      and in its child run;
    - **scalars**: single numbers (``best_iteration``; a mapping's leaves:
      ``best_score.valid_0.l2``).

    A value the mapping names but the call did not produce (no evaluation set, no early
    stopping) is left out without a word: it is the library's choice, not a failure.
    """

    defaults = {"max_steps": 10_000}

    def pre(self, call: TrackedCall, options: Mapping[str, Any]) -> Any:
        reading = call.reading
        if reading is None or reading.record is None or call.depth != 0:
            return None
        return record(call, reading.record)

    def post(self, call: TrackedCall, before: Any, options: Mapping[str, Any]) -> None:
        reading = call.reading
        if reading is None or call.depth != 0 or call.exception is not None:
            return
        model = fitted_model(call)
        label = self._label(call, model)
        params = arguments_as_params(call, reading)
        if params:
            if model is not None:
                logged = log_params(call, model, params)
                label = logged or label
                ended = time.time()
                rows(call.run).fitted(label, model, params, int((ended - (call.duration or 0)) * 1000), int(ended * 1000))
            else:
                call.run.writer.log_params({f"{label}.{name}": value for name, value in params.items()})
        now = int(time.time() * 1000)
        writer = call.run.writer
        for source in reading.curves:
            for name, values in curves_of(read(source, call, before)).items():
                for step, value in thinned(values, options["max_steps"]):
                    writer.log_metric(f"{label}.{name}", value, step=step, timestamp=now)
                if model is not None:
                    rows(call.run).scored(label, name, Score(values[-1], len(values) - 1, now, None))
        for source in reading.scalars:
            for name, value in scalars_of(source.name, read(source, call, before)).items():
                if value == source.absent_if:
                    continue
                writer.log_metric(f"{label}.{name}", value, step=0, timestamp=now)
                if model is not None:
                    rows(call.run).scored(label, name, Score(value, 0, now, None))

    def _label(self, call: TrackedCall, model: Any) -> str:
        if model is not None:
            return lineage(call.run).label(model)
        counts: dict[str, int] = call.run.state(self).setdefault("functions", {})
        library = (getattr(call.function, "__module__", None) or "").split(".")[0]
        name = f"{library}.{call.name}" if library else call.name
        counts[name] = number = counts.get(name, 0) + 1
        return name if number == 1 else f"{name}_{number}"


def fitted_model(call: TrackedCall) -> Any:
    """The model a call fitted, as its mapping's reading says (``result`` or
    ``instance``); None when it names none."""
    reading = call.reading
    if reading is None or reading.model is None:
        return None
    return call.result if reading.model == "result" else call.instance


def record(call: TrackedCall, recorder: Recorder) -> dict[str, Any] | None:
    """Have the library record its history into a dict during ``call`` (see
    :class:`~pypads.core.Recorder`), by adding to the call's keyword arguments (never the
    caller's own objects); the dict, or the caller's own where it passed one."""
    name = recorder.argument
    given = bound_arguments(call).get(name, _MISSING)
    if name not in call.kwargs and given is not _MISSING:
        return None  # passed by position: the call is left as the caller made it
    recorded: dict[str, Any] = {}
    if recorder.append is None:
        if isinstance(given, dict):
            return given
        if given is not _MISSING and given is not None:
            return None
        call.kwargs[name] = recorded
        return recorded
    make = resolve_loaded(recorder.append)
    if not callable(make):
        return None
    existing = call.kwargs.get(name)
    if existing is not None and not isinstance(existing, (list, tuple)):
        return None
    call.kwargs[name] = [*(existing or ()), make(recorded)]
    return recorded


def arguments_as_params(call: TrackedCall, reading: CallReading) -> dict[str, str]:
    """The arguments ``reading`` names as params, as text, secrets hidden."""
    arguments = bound_arguments(call)
    params: dict[str, Any] = {}
    for name in reading.params:
        value = arguments.get(name, _MISSING)
        if isinstance(value, Mapping):
            params.update((str(key), item) for key, item in value.items())
        elif value is not _MISSING:
            params[name] = value
    return redact_params({key: param_text(value) for key, value in redact(params).items()})


def bound_arguments(call: TrackedCall) -> dict[str, Any]:
    """The call's arguments by parameter name (defaults not filled in)."""
    signature = _signature(call.function)
    if signature is None:
        return dict(call.kwargs)
    try:
        return dict(signature.bind_partial(*call.args, **call.kwargs).arguments)
    except TypeError:  # arguments the signature refuses: the original has raised already
        return dict(call.kwargs)


@functools.lru_cache(maxsize=256)
def _signature(function: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(function)
    except (TypeError, ValueError):
        return None


def read(source: Source, call: TrackedCall, recorded: Any) -> Any:
    """The value ``source`` names in ``call``; None where it has none (an attribute
    missing, or raising: no evaluation set was given)."""
    if source.root == "result":
        value = call.result
    elif source.root == "instance":
        value = call.instance
    elif source.root == "recorded":
        value = recorded
    else:
        value = bound_arguments(call).get(str(source.argument))
    for attribute, called in source.steps:
        if value is None:
            return None
        try:
            value = getattr(value, attribute)
            if called:
                value = value()
        except Exception:  # the library's way of saying "not recorded" (XGBoost raises)
            return None
    return value


def curves_of(value: Any) -> dict[str, list[float]]:
    """Per-step series in ``value``: a mapping's sequences of numbers, nested mappings'
    keys joined with '.', or a DataFrame's columns."""
    columns = getattr(value, "columns", None)
    if columns is not None and hasattr(value, "__getitem__"):
        try:
            value = {str(column): list(value[column]) for column in columns}
        except Exception:
            return {}
    found: dict[str, list[float]] = {}
    for name, leaf in _leaves(value, ""):
        if isinstance(leaf, (list, tuple)) or (hasattr(leaf, "tolist") and getattr(leaf, "ndim", 0) == 1):
            numbers_ = [_number(item) for item in leaf]
            if numbers_ and all(item is not None for item in numbers_):
                found[name] = [item for item in numbers_ if item is not None]
    return found


def scalars_of(name: str, value: Any) -> dict[str, float]:
    """A single number named ``name``, or a mapping's numbers named by their keys."""
    number = _number(value)
    if number is not None:
        return {name: number}
    if not isinstance(value, Mapping):
        return {}
    return {f"{name}.{key}": found for key, leaf in _leaves(value, "") if (found := _number(leaf)) is not None}


def thinned(values: list[float], limit: int) -> list[tuple[int, float]]:
    """``(step, value)`` of every value, or of ``limit`` evenly spaced ones and the last."""
    if len(values) <= limit:
        return list(enumerate(values))
    stride = math.ceil(len(values) / limit)
    kept = list(range(0, len(values), stride))
    if kept[-1] != len(values) - 1:
        kept.append(len(values) - 1)
    return [(step, values[step]) for step in kept]


def _leaves(value: Any, prefix: str) -> list[tuple[str, Any]]:
    if not isinstance(value, Mapping):
        return [(prefix, value)] if prefix else []
    leaves: list[tuple[str, Any]] = []
    for key, item in value.items():
        leaves += _leaves(item, f"{prefix}.{key}" if prefix else str(key))
    return leaves


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    return float(value)  # NaN too: MLflow keeps it, and a curve that diverged says so
