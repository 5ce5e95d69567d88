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

import contextlib
import threading
import time
import types
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from pypads.core import CallReading, Logger, Recorder, redact, redact_params, redact_text, resolve_loaded
from pypads.recording.content.call_values import (
    bound_arguments,
    csv_table,
    curves_of,
    fitted_model,
    read,
    scalars_of,
    thinned,
)
from pypads.recording.content.catalogue import catalogue
from pypads.recording.content.lineage import lineage
from pypads.recording.loggers.comparison import Score, rows
from pypads.recording.loggers.datasets import eval_sets
from pypads.recording.loggers.parameters import log_params, param_text
from pypads.run import TrackedCall

_MISSING = object()  # a value the call does not have


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
      evenly, its last step kept. The whole curve is in the model's child run too, its
      last value the model's score on its page;
    - **scalars**: single numbers (``best_iteration``; a mapping's leaves:
      ``best_score.valid_0.l2``);
    - **tables** and **texts**: files ``<label>/<name>.csv`` and ``.txt`` (a booster's
      importance, statsmodels' coefficients and ``summary()``); a table with a **chart**
      also as a bar chart of its top 20 rows, ``<name>.png`` among the model's pictures.

    Before the call, where the entry's ``record`` says so, a keyword argument is added
    that has the library record its history (see :func:`record`). A model that is the
    result of a method (statsmodels' results) takes its receiver's label (``ARIMA``).

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
        with _unshown_warnings():
            self._log(call, reading, before, options["max_steps"])

    def _log(self, call: TrackedCall, reading: CallReading, before: Any, max_steps: int) -> None:
        model = fitted_model(call)
        # What the model is known by: the object fitted (statsmodels' ARIMA, whose fit
        # returns a results object that is the saved model), else the model itself.
        subject = call.instance if model is not None and call.instance is not None else model
        label = self._label(call, subject)
        params = params_of_call(call, reading)
        if params and subject is not None:
            label = log_params(call, subject, params) or label
            ended = time.time()
            rows(call.run).fitted(label, subject, params, int((ended - (call.duration or 0)) * 1000), int(ended * 1000))
        elif params:
            call.run.writer.log_params({f"{label}.{name}": value for name, value in params.items()})
        if model is not None and model is not subject:
            lineage(call.run).share_label(model, label)
        self._log_values(call, reading, label, model, before, max_steps)
        self._log_files(call, reading, label)

    def _log_values(self, call: TrackedCall, reading: CallReading, label: str, model: Any, before: Any,
                    max_steps: int) -> None:
        now = int(time.time() * 1000)
        writer = call.run.writer
        evaluated_on = datasets_of_eval_sets(call, reading) if model is not None else {}
        for source in reading.curves:
            for name, values in curves_of(read(source, call, before)).items():
                steps = thinned(values, max_steps)
                for step, value in steps:
                    writer.log_metric(f"{label}.{name}", value, step=step, timestamp=now)
                if model is not None:
                    rows(call.run).curve(label, name, steps, now, evaluated_on.get(name.split(".")[0]))
        for source in reading.scalars:
            for name, value in scalars_of(source.name, read(source, call, before)).items():
                if value == source.absent_if:
                    continue
                writer.log_metric(f"{label}.{name}", value, step=0, timestamp=now)
                if model is not None:
                    rows(call.run).scored(label, name, Score(value, 0, now, None))

    def _log_files(self, call: TrackedCall, reading: CallReading, label: str) -> None:
        charts = dict(reading.charts)
        for name, columns in reading.tables:
            values = [(column, read(source, call, None)) for column, source in columns]
            table = csv_table(values)
            if table is None:
                continue
            content = table.encode("utf-8")
            call.run.writer.log_bytes(f"{label}/{name}.csv", content)
            # Drawn by the uploader (matplotlib stays out of the script); not for a column the
            # library did not give (a linear booster has no gain).
            charted = dict(values).get(charts.get(name, ""))
            if charted is not None and (not hasattr(charted, "__len__") or len(charted) > 0):
                call.run.writer.log_entry({"kind": "chart", "label": label, "name": name, "column": charts[name]},
                                          content)
        for name, source in reading.texts:
            value = read(source, call, None)
            if value is not None:
                call.run.writer.log_bytes(f"{label}/{name}.txt", redact_text(str(value)).encode("utf-8"))

    def _label(self, call: TrackedCall, subject: Any) -> str:
        if subject is not None:
            return lineage(call.run).label(subject)
        counts: dict[str, int] = call.run.state(self).setdefault("functions", {})
        library = (getattr(call.function, "__module__", None) or "").split(".")[0]
        name = f"{library}.{call.name}" if library else call.name
        counts[name] = number = counts.get(name, 0) + 1
        return name if number == 1 else f"{name}_{number}"


class _Quiet(threading.local):
    active = False


_quiet = _Quiet()
_shown_by: list[Callable[..., Any]] = []  # the showwarning that was in place when ours came in


@contextlib.contextmanager
def _unshown_warnings() -> Iterator[None]:
    """What a reading calls is the library's (statsmodels' summary() warns of a small
    sample): no warning of it is shown to the script, which made no such call itself.

    Not ``catch_warnings``: any change to the warning filters, even one undone, makes
    Python forget which warnings it has shown, so the script's own "once per place"
    warnings (XGBoost's FutureWarning for positional ``evals``) would show again after
    each tracked call. Only ``showwarning`` is replaced, and only this thread's warnings
    are kept from it; a warning made an error (``-W error``) still raises, and the value
    that raised is left out. Another thread's warning while ours is in place is shown."""
    installed = warnings.showwarning is not _show
    if installed:
        _shown_by[:] = [warnings.showwarning]
        warnings.showwarning = _show
    _quiet.active = True
    try:
        yield
    finally:
        _quiet.active = False
        if installed and warnings.showwarning is _show:
            warnings.showwarning = _shown_by[0]


def _show(*args: Any, **kwargs: Any) -> None:
    if not _quiet.active and _shown_by:
        _shown_by[0](*args, **kwargs)


def datasets_of_eval_sets(call: TrackedCall, reading: CallReading) -> dict[str, str]:
    """The name of each evaluation set (what its curves begin with: ``train``) whose data
    the run knows as a dataset, and that dataset's name; see the reading's ``evals``."""
    found = catalogue(call)
    return {name: known.name for holder, name in eval_sets(call, reading) if (known := found.known(holder, None)) is not None}


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
    # Only a function or class the library defines (not sys.exit reached through one of its modules).
    library = recorder.append.split(".")[0]
    if not isinstance(make, (types.FunctionType, type)) or (make.__module__ or "").split(".")[0] != library:
        return None
    existing = call.kwargs.get(name)
    if existing is not None and not isinstance(existing, (list, tuple)):
        return None
    try:
        made = make(recorded)
    except Exception:  # a function that wants other arguments: the call goes on unrecorded
        return None
    call.kwargs[name] = [*(existing or ()), Guarded(made, recorded) if callable(made) else made]
    return recorded


class Guarded:
    """A recorder pypads added to the call (LightGBM's ``record_evaluation`` callback),
    whose failure never reaches the training: LightGBM's own raises ``KeyError`` when a
    script's callback adds a validation set halfway. After a failure it records nothing,
    and what it recorded is dropped: half a curve would say training stopped there. Its
    other attributes are the recorder's (LightGBM reads a callback's ``order``)."""

    def __init__(self, recorder: Callable[..., Any], recorded: dict[str, Any]) -> None:
        self._recorder = recorder
        self._recorded = recorded
        self._failed = False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._failed:
            return None
        try:
            return self._recorder(*args, **kwargs)
        except Exception:
            self._failed = True
            self._recorded.clear()
            return None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # its own (not yet set while copy makes one) and Python's
            raise AttributeError(name)
        return getattr(self._recorder, name)


def params_of_call(call: TrackedCall, reading: CallReading) -> dict[str, str]:
    """The values ``reading`` names as params, as text, secrets hidden: a mapping by its
    items (a params dict, a ``**kwargs``), a list of pairs too (XGBoost's way to give a key
    twice: ``[("eval_metric", "logloss"), ("eval_metric", "error")]`` gives a list), any
    other value by its source's name."""
    params: dict[str, Any] = {}
    for source in reading.params:
        value = read(source, call, None, _MISSING)
        if isinstance(value, Mapping):
            params.update((str(key), item) for key, item in value.items())
        elif _is_pairs(value):
            given: dict[str, list[Any]] = {}
            for key, item in value:
                given.setdefault(key, []).append(item)
            params.update((key, items[0] if len(items) == 1 else items) for key, items in given.items())
        elif value is not _MISSING:
            params[source.name] = value
    return redact_params({key: param_text(value) for key, value in redact(params).items()})


def _is_pairs(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and all(
        isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str) for item in value)
