"""The datasets of a run, as the loggers that name them share them: what an array or a
DataFrame is (:func:`describe`, from its metadata, never its data), the data a call works
on (:func:`data_arguments`), the name the script gives a value (:func:`caller_name`), and
the run's :class:`Catalogue` of datasets, known by identity and by content digest."""

from __future__ import annotations

import sys
import weakref
from dataclasses import dataclass
from types import FrameType
from typing import Any

import numpy as np

from pypads.recording.content.digests import content_digest
from pypads.recording.content.frames import name_of
from pypads.run import TrackedCall

MAX_COLUMNS = 1000  # a schema wider than this is cut: MLflow shows it, nobody reads it
DIGEST_LENGTH = 16  # hex characters; MLflow keeps at most 36
FIT_HOOKS = frozenset({"pypads_fit", "pypads_cross_validate"})
METRIC_HOOK = "pypads_metric"

def describe(value: Any) -> dict[str, Any] | None:
    """What a schema needs of ``value`` (kind, dtypes, shape, column names), read from
    its metadata without touching its data; None for a value that is no array or frame."""
    if isinstance(value, np.ndarray):
        described = {"kind": "array", "dtype": str(value.dtype), "shape": list(value.shape)}
        if value.dtype.names:  # a structured array: its fields are its columns (its dtype's text is no dtype)
            described["fields"] = [[name, str(value.dtype.fields[name][0])] for name in value.dtype.names[:MAX_COLUMNS]]
        return described
    module = type(value).__module__
    if module.startswith("pandas") and hasattr(value, "columns"):
        columns = value.columns[:MAX_COLUMNS]
        return {"kind": "frame", "shape": list(value.shape), "columns": [str(name) for name in columns],
                "dtypes": [str(dtype) for dtype in value.dtypes.iloc[:MAX_COLUMNS]]}
    if module.startswith("pandas") and hasattr(value, "dtype") and getattr(value, "ndim", 0) == 1:
        # A Series, or an extension array (Categorical, IntegerArray), which has no name
        return {"kind": "series", "shape": list(value.shape), "name": str(getattr(value, "name", None)),
                "dtype": str(value.dtype)}
    if module.startswith("scipy.sparse") and hasattr(value, "nnz"):
        return {"kind": "sparse", "dtype": str(value.dtype), "shape": list(value.shape)}
    return None


def data_arguments(call: TrackedCall) -> tuple[Any, Any]:
    """The data a call works on: ``(X, y)`` of a fit or a cross-validation, ``(X, None)``
    of a predict or transform, ``(y_true, None)`` of a metric."""
    if call.instance is None and METRIC_HOOK in call.hooks:  # checked first: a metric in a loop
        if call.args and not call.kwargs:
            return call.args[0], None
        truth = call.kwargs.get("y_true", call.kwargs.get("labels_true", call.args[0] if call.args else None))
        return truth, None
    args = call.args[1:] if call.instance is not None else call.args
    if args and hasattr(args[0], "fit") and describe(args[0]) is None:  # cross_validate(estimator, X, y)
        args = args[1:]
    features = args[0] if args else call.kwargs.get("X")
    targets = (args[1] if len(args) > 1 else call.kwargs.get("y")) if call.hooks & FIT_HOOKS else None
    return features, targets


def caller_name(value: Any, call: TrackedCall) -> str | None:
    """The name the script's own code gives ``value`` (``X_test``): looked up by identity
    in the frame that made the call, past pypads' frames and the called library's."""
    library = (getattr(call.function, "__module__", None) or "").split(".")[0]
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        top = module.split(".")[0]
        if top not in {"pypads", library}:
            break
        frame = frame.f_back
    if frame is None:
        return None
    name = name_of(frame, value)
    return name if name is not None and not name.startswith("_") else None


@dataclass
class Known:
    """A dataset as the run knows it: what the Datasets logger logs, and what the Input
    logger refers to instead of copying the data."""

    name: str
    digest: str
    context: str
    features: dict[str, Any]
    targets: dict[str, Any] | None
    logged: bool = False

    def reference(self, part: str | None = None) -> dict[str, Any]:
        """How a call's record names this dataset (``part="targets"`` for its ``y``)."""
        shown = {"dataset": self.name, "digest": self.digest}
        return {**shown, "part": part} if part else shown


class Catalogue:
    """The datasets of one run, known by the identity of their ``(X, y)`` objects (no
    digest again for the same objects) and by their digest (equal content under other
    objects). An object changed in place after its first sight keeps its first digest."""

    def __init__(self) -> None:
        self._seen: dict[tuple[int, int], tuple[weakref.ref[Any], Known | None]] = {}
        self._by_digest: dict[str, Known] = {}

    def known(self, features: Any, targets: Any) -> Known | None:
        """The dataset of these very objects, if seen before (a dict lookup, no digest)."""
        entry = self._seen.get((id(features), id(targets)))
        return entry[1] if entry is not None and entry[0]() is features else None

    def identify(self, call: TrackedCall, features: Any, targets: Any, known_by: Any = None,
                 context: str | None = None) -> Known | None:
        """The dataset of ``features`` (with ``targets``): seen before, or digested and
        named now; None for a value that is no array or frame, or cannot be digested.
        ``known_by``: the object the data was read of (an XGBoost ``DMatrix``, a statsmodels
        model), by which it is known instead of ``(features, targets)``. The dataset is
        named as the script names its features, else its targets (a time series beside
        the constant column a model made), else ``known_by`` if it is no model."""
        key = (id(known_by), id(None)) if known_by is not None else (id(features), id(targets))
        holder = features if known_by is None else known_by
        entry = self._seen.get(key)
        if entry is not None and entry[0]() is holder:
            return entry[1]
        described = describe(features)
        if described is None:
            return None
        try:
            reference = weakref.ref(holder)
        except TypeError:
            return None
        digest = _digest(features, targets)
        known = None if digest is None else self._by_digest.get(digest)
        if digest is not None and known is None:
            name = caller_name(features, call)
            if name is None and known_by is not None:
                name = caller_name(targets, call) if targets is not None else None
                name = name or (None if known_by is call.instance else caller_name(known_by, call))
            known = self._by_digest[digest] = Known(
                name or f"dataset-{digest[:8]}", digest,
                context or ("training" if call.hooks & FIT_HOOKS else "evaluation"), described, describe(targets))
        self._seen[key] = (reference, known)
        return known


# The last run asked about and its catalogue: a metric in a loop skips the run's states.
_last: tuple[Any, Catalogue | None] = (None, None)


def catalogue(call: TrackedCall) -> Catalogue:
    """The run's :class:`Catalogue`, shared by the loggers that name datasets."""
    global _last
    run = call.run
    last_run, found = _last
    if last_run is run and found is not None:
        return found
    state = run.state(Catalogue)
    found = state.get("catalogue")
    if found is None:
        found = state.setdefault("catalogue", Catalogue())
    _last = (run, found)
    return found


def _digest(features: Any, targets: Any) -> str | None:
    digest = content_digest(features)
    if digest is None or targets is None:
        return digest[:DIGEST_LENGTH] if digest else None
    target_digest = content_digest(targets)
    if target_digest is None:
        return None
    # Features and targets together name the dataset: the same X with other labels differs.
    combined = content_digest(f"{digest}:{target_digest}".encode())
    return combined[:DIGEST_LENGTH] if combined else None
