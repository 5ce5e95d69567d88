"""Lineage: which model and which data a value came from, so that what a run logs can
be named in words a reader knows (``RandomForestRegressor.r2_score_X_test``).

Three things are remembered per run, all by identity and weakly (no user data is kept
alive):

- a *label* per estimator the user's own code fitted or scored: its class name for the
  first one, ``<Class>_1``, ``<Class>_2``… for other instances of the class;
- the estimator each one fitted inside another's fit belongs to (a pipeline's steps, a
  search's refit model), so that a prediction it makes when the outer one's own code
  calls it (the untracked ``pipeline.score(X_test, y_test)``) is the outer model's; the
  script calling the step itself, or refitting it, makes it the script's again;
- the data each estimator was fitted on, so that a prediction on that very data is
  known to be a *training* one;
- the *origin* of each prediction: the label of the model that made it, the caller's
  variable name for the data it was made on, and whether that was the training data.

The caller's variable name is found once per place in the code (code object and
instruction), by the identity of the argument among that frame's local variables, and
cached for the place and for the object: a metric computed in a loop pays a dictionary
lookup for it, not a search.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
import weakref
from collections.abc import Iterator
from types import CodeType, FrameType
from typing import Any, NamedTuple, TypeVar

import pypads.core
from pypads.recording.content.frames import name_of
from pypads.run import RunContext

# Frames of pypads' own code (the wrappers between the script and the original) are skipped.
_PYPADS_FOLDER = os.path.dirname(os.path.dirname(os.path.abspath(pypads.core.__file__)))


class Origin(NamedTuple):
    """Where a value came from."""

    model: str | None
    """The label of the user's estimator whose prediction it is (None inside a library)."""
    data: str | None
    """The caller's variable name for the data it was computed on, if known."""
    training: bool
    """Whether it was computed on the data the estimator was fitted on."""


class Lineage:
    """The lineage of one run; get it with :func:`lineage`."""

    def __init__(self, libraries: frozenset[str]) -> None:
        self._lock = threading.Lock()
        self._libraries = libraries  # frames in these packages are not the user's
        self._labels: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self._per_class: dict[str, int] = {}
        self._fitted_on: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
        # Weak both ways: a pipeline holds its steps, so a strong value would keep its key alive.
        self._owners: weakref.WeakKeyDictionary[Any, weakref.ref[Any]] = weakref.WeakKeyDictionary()
        self._origins: dict[int, tuple[weakref.ref[Any], Origin]] = {}
        self._names: dict[tuple[CodeType, int, int], str | None] = {}
        self._named: dict[int, tuple[weakref.ref[Any], str]] = {}
        self._internal: dict[CodeType, bool] = {}
        self._steps: dict[str, Iterator[int]] = {}

    # --- models ---------------------------------------------------------------------
    def fitted_inside(self, instance: Any, owner: Any) -> None:
        """``instance`` was fitted inside the fit of ``owner``, an estimator of the script's."""
        try:
            self._owners[instance] = weakref.ref(owner)
        except TypeError:
            pass

    def fitted_by_script(self, instance: Any) -> None:
        """The script fitted ``instance`` itself: it belongs to no other estimator now."""
        try:
            self._owners.pop(instance, None)
        except TypeError:
            pass

    def model_of(self, instance: Any) -> Any:
        """The script's estimator that ``instance`` predicts for, in the tracked call being
        made: the one it was fitted inside, if that one's library code is the caller
        (``pipeline.score``); else ``instance`` itself (the script calls a step directly)."""
        try:
            owner = self._owners.get(instance)
        except TypeError:
            return instance
        found = owner() if owner is not None else None
        return found if found is not None and self.called_by_library() else instance

    def called_by_library(self) -> bool:
        """Whether the tracked call being made was made by library code (a step's
        ``predict`` inside the untracked ``pipeline.score``), not by the script's own:
        asked from pypads' code, which is skipped."""
        frame: FrameType | None = sys._getframe(1)
        while frame is not None and _in_pypads(frame.f_code):
            frame = frame.f_back
        return frame is not None and self._is_internal(frame)

    def label(self, instance: Any) -> str:
        """The label of ``instance``, given at its first sight."""
        try:
            label = self._labels.get(instance)
            if label is None:
                label = self.relabel(instance)
            return label
        except TypeError:  # not weakly referenceable or not hashable: a label of its own each time
            return self._next_label(type(instance).__name__)

    def share_label(self, other: Any, label: str) -> None:
        """Give ``other`` the label ``label``: a fit's result that is its model
        (statsmodels' results) is known by its model's label (``ARIMA``)."""
        try:
            self._labels[other] = label
        except TypeError:  # not weakly referenceable: labelled as its class when seen
            pass

    def relabel(self, instance: Any) -> str:
        """A new label for ``instance`` (its hyper-parameters changed since it was logged)."""
        label = self._next_label(type(instance).__name__)
        self._labels[instance] = label
        return label

    def _next_label(self, kind: str) -> str:
        with self._lock:
            index = self._per_class.get(kind, 0)
            self._per_class[kind] = index + 1
        return kind if index == 0 else f"{kind}_{index}"

    def labels_of(self, kind: str) -> int:
        """How many labels the class named ``kind`` has been given."""
        return self._per_class.get(kind, 0)

    def fitted(self, instance: Any, data: Any) -> None:
        """``instance`` was fitted on ``data``."""
        try:
            self._fitted_on[instance] = id(data)
        except TypeError:
            pass

    def on_training_data(self, instance: Any, data: Any) -> bool:
        try:
            return data is not None and self._fitted_on.get(instance) == id(data)
        except TypeError:
            return False

    # --- values ---------------------------------------------------------------------
    def produced(self, value: Any, origin: Origin) -> None:
        remember_weakly(self._origins, value, origin)  # numbers, tuples…: nothing to follow

    def origin_of(self, values: tuple[Any, ...]) -> Origin | None:
        """The origin of the first of ``values`` (or of the array it is a view of:
        ``proba[:, 1]``) that a tracked prediction returned."""
        origins = self._origins
        if not origins:  # nothing predicted yet (a metric on labels alone, in a loop)
            return None
        for value in values:
            entry = origins.get(id(value))
            if entry is not None and entry[0]() is value:
                return entry[1]
            base = getattr(value, "base", None)
            entry = origins.get(id(base)) if base is not None else None
            if entry is not None and entry[0]() is base:
                return entry[1]
        return None

    # --- the user's code ------------------------------------------------------------
    def caller_name(self, value: Any, position: int) -> str | None:
        """The user's variable name for ``value``, the ``position``-th argument of the
        tracked call being made: found once per place in the user's code, and kept for
        the object. The same object passed again (``y_test`` scored in a loop) is known
        at once, without a walk over the stack: on a metric called in a loop, that walk
        cost more than anything else pypads does for it."""
        named = self._named.get(id(value))
        if named is not None and named[0]() is value:
            return named[1]
        frame = self._user_frame()
        if frame is None:
            return None
        key = (frame.f_code, frame.f_lasti, position)
        try:
            name = self._names[key]
        except KeyError:
            name = self._names[key] = name_of(frame, value)
        if name is not None:
            remember_weakly(self._named, value, name)  # a list, a number: found by its place each time
        return name

    def _user_frame(self) -> FrameType | None:
        frame: FrameType | None = sys._getframe(2)
        internal = self._internal
        while frame is not None:
            code = frame.f_code
            inside = internal.get(code)
            if inside is None:
                inside = internal[code] = self._is_internal(frame)
            if not inside:
                return frame
            frame = frame.f_back
        return None

    def _is_internal(self, frame: FrameType) -> bool:
        if _in_pypads(frame.f_code):
            return True
        module = frame.f_globals.get("__name__")
        return isinstance(module, str) and module.partition(".")[0] in self._libraries

    # --- series ---------------------------------------------------------------------
    def next_step(self, series: str) -> int:
        """0 for the first value of ``series``, then 1, 2…: a value computed once is at
        step 0, as MLflow logs a metric given no step, and a fold's step is its index."""
        steps = self._steps.get(series)
        if steps is None:
            steps = self._steps.setdefault(series, itertools.count())
        return next(steps)  # atomic: no lock on a metric's path


def _in_pypads(code: CodeType) -> bool:
    return code.co_filename.startswith(_PYPADS_FOLDER) or code.co_filename.startswith("<pypads")


Kept = TypeVar("Kept")


def remember_weakly(table: dict[int, tuple[weakref.ref[Any], Kept]], value: Any, kept: Kept) -> None:
    """Keep ``kept`` for ``value`` in ``table``, by its identity, for as long as it lives
    (the entry goes with it: its id may be reused); nothing for a value that cannot be
    weakly referenced. A reader checks ``entry[0]() is value``."""
    key = id(value)

    def forget(_: object) -> None:
        table.pop(key, None)

    try:
        table[key] = (weakref.ref(value, forget), kept)
    except TypeError:
        pass


_KEY = object()  # the key of the lineage among a run's states
# The last run asked about and its lineage: a metric in a loop skips the run's lock.
_last: tuple[RunContext | None, Lineage | None] = (None, None)


def lineage(run: RunContext) -> Lineage:
    """The lineage of ``run`` (one per run, shared by all loggers)."""
    global _last
    last_run, found = _last
    if last_run is run and found is not None:
        return found
    state = run.state(_KEY)
    found = state.get("lineage")
    if found is None:
        libraries = frozenset(file.library for file in run.mappings)
        found = state.setdefault("lineage", Lineage(libraries))
    _last = (run, found)
    return found


def first_data(call_args: tuple[Any, ...], kwargs: dict[str, Any], instance: Any) -> tuple[Any, int]:
    """The call's first data argument (``X`` of a method, ``y_true`` of a function) and
    its position among the arguments."""
    position = 1 if instance is not None else 0
    if len(call_args) > position:
        return call_args[position], position
    for key in ("X", "y_true", "labels_true"):
        if key in kwargs:
            return kwargs[key], -1
    return None, -1
