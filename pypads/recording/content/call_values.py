"""Values read of a tracked call, as a mapping file's ``reading`` names them: its
arguments by name, a source's value, training curves and single numbers in what it
finds, and a table of columns as CSV. Used by the Readings logger."""

from __future__ import annotations

import csv
import functools
import inspect
import io
import math
import numbers
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from pypads.core import Source
from pypads.run import TrackedCall


def bound_arguments(call: TrackedCall) -> dict[str, Any]:
    """The call's arguments by parameter name (defaults not filled in)."""
    signature = _signature(call.function)
    if signature is None:
        return dict(call.kwargs)
    try:
        return dict(signature.bind_partial(*call.args, **call.kwargs).arguments)
    except TypeError:
        # Positional arguments for keyword-only parameters, which a decorator of the
        # library still takes by their order (``xgboost.train(params, dtrain, 10, evals)``,
        # with a FutureWarning); or arguments the original has refused already.
        named = [parameter.name for parameter in signature.parameters.values()
                 if parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)]
        return {**dict(zip(named, call.args)), **call.kwargs}


@functools.lru_cache(maxsize=256)
def _signature(function: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(function)
    except (TypeError, ValueError):
        return None


def fitted_model(call: TrackedCall) -> Any:
    """The model a call fitted, as its mapping's reading says (``result`` or
    ``instance``); None when it names none."""
    reading = call.reading
    if reading is None or reading.model is None:
        return None
    return call.result if reading.model == "result" else call.instance


def read(source: Source, call: TrackedCall, recorded: Any, missing: Any = None) -> Any:
    """The value ``source`` names in ``call``; ``missing`` where it has none (an argument
    not given, an attribute missing or raising: no evaluation set was given), or where it
    would call a function the called library does not define (a dict's ``clear``)."""
    return read_steps(source, root_of(source, call, recorded, missing), call, missing)


def read_steps(source: Source, value: Any, call: TrackedCall, missing: Any = None) -> Any:
    """What ``source``'s attributes and calls give of ``value`` (its root's value, or
    another object of that kind: an evaluation set read as the training set is)."""
    library = _library_of(call)
    for step in source.steps:
        if value is None or value is missing:
            return missing
        try:
            value = getattr(value, step.attribute)
            if step.called:
                if not _defined_in(value, library):
                    return missing
                value = value(**dict(step.keywords))
        except Exception:  # the library's way of saying "not recorded" (XGBoost raises)
            return missing
    return value


def root_of(source: Source, call: TrackedCall, recorded: Any, missing: Any = None) -> Any:
    """The value ``source`` starts from: the result, the receiver, what was recorded, an
    argument (``missing`` if not given) or all of them."""
    if source.root == "result":
        value = call.result
    elif source.root == "instance":
        value = call.instance
    elif source.root == "recorded":
        value = recorded
    elif source.argument is None:  # every argument but the receiver
        value = {name: given for name, given in bound_arguments(call).items() if given is not call.instance}
    else:
        value = bound_arguments(call).get(source.argument, missing)
    return value


def _library_of(call: TrackedCall) -> str:
    return (getattr(call.function, "__module__", None) or "").split(".")[0]


def _defined_in(function: Any, library: str) -> bool:
    """Whether ``function`` is the library's own (a method's module is its defining
    class's): a mapping file calls nothing else of the values it reads."""
    module = getattr(function, "__module__", None)
    return bool(library) and isinstance(module, str) and module.split(".")[0] == library


def csv_table(columns: list[tuple[str, Any]]) -> str | None:
    """A CSV of ``columns`` (name, values), a row per value. Mappings (XGBoost's
    ``get_score``) are aligned by key, which names the rows; else the first Series'
    index does, or the row's number. A two-dimensional value gives ``<name>_0``,
    ``<name>_1``…. None if no column has values, or sequences differ in length."""
    mappings = [(name, value) for name, value in columns if isinstance(value, Mapping)]
    keys = list(dict.fromkeys(key for _, value in mappings for key in value))
    names: list[str] = []
    values: list[list[Any]] = []
    index: list[Any] | None = keys or None
    for name, value in columns:
        if isinstance(value, Mapping):
            names.append(name)
            values.append([value.get(key, "") for key in keys])
            continue
        if value is None:
            continue
        if index is None and hasattr(value, "index") and not isinstance(value, (list, tuple)):
            index = list(value.index)
        array = np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value)
        if array.ndim == 1:
            names.append(name)
            values.append(array.tolist())
        elif array.ndim == 2:
            names += [f"{name}_{column}" for column in range(array.shape[1])]
            values += [array[:, column].tolist() for column in range(array.shape[1])]
    if not values or len({len(column) for column in values}) != 1:
        return None
    rows = zip(index if index is not None and len(index) == len(values[0]) else range(len(values[0])), *values)
    output = io.StringIO()
    writer = csv.writer(output)
    writer.writerow(["", *names])
    writer.writerows(rows)
    return output.getvalue()


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
