"""Datasets: each distinct array or DataFrame the script fits, predicts or scores on, as
one MLflow dataset input of the run (MLflow's Datasets panel); and, for a call whose
mapping entry has a reading with ``data``, the data it names (a ``DMatrix``'s)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pypads.core import CallReading, DataReading, Logger
from pypads.recording.content.call_values import fitted_model, read, read_steps, root_of
from pypads.recording.content.catalogue import Known, caller_name, catalogue, data_arguments
from pypads.recording.content.lineage import lineage
from pypads.recording.loggers.comparison import rows
from pypads.run import TrackedCall


class Datasets(Logger):
    """Logs the data of each top-level fit (context ``training``), predict, transform and
    metric (``evaluation``) once as a dataset input (one made by an untracked library call
    of the script's, such as ``pipeline.score(X_test, y_test)``, only on data the script
    names: ``X_test``, not what the pipeline's steps made of it): its digest (BLAKE3 of the content,
    :func:`~pypads.recording.content.digests.content_digest`), its schema and shape, and the
    name the script gives it, else ``dataset-<digest>``. An object seen before is known
    by its identity (no digest again); equal content under another object, by its digest.
    At most ``max_datasets`` per run; the tag ``pypads.datasets`` says if more were left out.
    """

    defaults = {"max_datasets": 100}

    def pre(self, call: TrackedCall, options: Mapping[str, Any]) -> tuple[Read | None, list[Known]] | None:
        reading = call.reading
        if reading is None or not reading.data or call.depth != 0:
            return None
        return read_data(call, reading.data), read_eval_sets(call, reading)

    def post(self, call: TrackedCall, before: tuple[Read | None, list[Known]] | None,
             options: Mapping[str, Any]) -> None:
        if call.depth != 0 or call.exception is not None:
            return
        if before is not None:
            self._log_read(call, *before, options)
            return
        features, targets = data_arguments(call)
        if features is None:
            return
        found = catalogue(call)
        known = found.known(features, targets)
        if known is not None and known.logged and call.instance is None:
            return  # the common case: a function (a metric) given the same objects again
        known_lineage = lineage(call.run)
        if known is None:
            if known_lineage.called_by_library() and caller_name(features, call) is None:
                # Made by an untracked library call of the script's (``pipeline.score``,
                # ``search.score``) on data the script does not name: that call's
                # internals (what a pipeline's steps made of ``X_test``), not its data.
                return
            known = found.identify(call, features, targets)
        if known is not None and call.instance is not None:  # what the model's page lists
            model = known_lineage.model_of(call.instance)  # a pipeline's step inside pipeline.score: the pipeline
            rows(call.run).used(known_lineage.label(model), known.name, known.context)
        self._log(call, known, options)

    def _log_read(self, call: TrackedCall, read: Read | None, evaluated: list[Known], options: Mapping[str, Any]) -> None:
        """The data a mapping file's reading named (see :func:`read_data`), and its
        evaluation sets' (see :func:`read_eval_sets`)."""
        model = fitted_model(call) if call.instance is None else call.instance
        for known in [read.known] if read is not None else []:
            if model is not None:
                rows(call.run).used(lineage(call.run).label(model), known.name, known.context)
            self._log(call, known, options)
        for known in evaluated:
            if model is not None:
                rows(call.run).used(lineage(call.run).label(model), known.name, "evaluation")
            self._log(call, known, options)

    def _log(self, call: TrackedCall, known: Known | None, options: Mapping[str, Any]) -> None:
        if known is None or known.logged:
            return  # the common case: the same object again
        state = call.run.state(self)
        logged = state.get("logged", 0)
        if logged >= options["max_datasets"]:
            if not state.get("over"):
                state["over"] = True
                call.run.writer.set_tag("pypads.datasets",
                                        f"more than {options['max_datasets']} datasets: later ones are not logged")
            return
        state["logged"], known.logged = logged + 1, True
        shape = known.features["shape"]
        profile: dict[str, Any] = {"num_rows": shape[0] if shape else 0, "num_elements": math.prod(shape)}
        if known.targets is not None:
            profile["targets_shape"] = known.targets["shape"]
        call.run.writer.log_entry({
            "kind": "dataset", "name": known.name, "digest": known.digest, "context": known.context,
            "features": known.features, "targets": known.targets, "profile": profile,
        })


@dataclass
class Read:
    """The data of a call as its mapping file's reading names it, read before the call."""

    holder: Any  # the object read (a DMatrix): what the data is known by
    known: Known  # its dataset


def read_data(call: TrackedCall, data: tuple[DataReading, ...]) -> Read | None:
    """The dataset of the data the first of ``data`` that has features names in ``call``
    (statsmodels: exog and endog, else a time series' endog alone), read and digested
    once per holder (the object the first's features are read of). Known before the call,
    so that the curves the call records can be linked to it, whatever the loggers' order."""
    holder = root_of(data[0].features, call, None)
    if holder is None:
        return None
    found = catalogue(call)
    known = found.known(holder, None)
    for alternative in data if known is None else ():
        features = read(alternative.features, call, None)
        if features is not None:
            targets = None if alternative.targets is None else read(alternative.targets, call, None)
            known = found.identify(call, features, targets, holder)
            break
    return None if known is None else Read(holder, known)


def read_eval_sets(call: TrackedCall, reading: CallReading) -> list[Known]:
    """The datasets of the call's evaluation sets (a reading's ``evals``) that are not its
    training data, each read as its ``data`` reads the training set (``get_data()`` of
    another ``DMatrix``), once per set: what the curves of that set are computed on."""
    found = catalogue(call)
    data = reading.data[0]
    evaluated = []
    for holder, _ in eval_sets(call, reading):
        known = found.known(holder, None)
        if known is None:
            features = read_steps(data.features, holder, call)
            targets = None if data.targets is None else read_steps(data.targets, holder, call)
            known = None if features is None else found.identify(call, features, targets, holder, "evaluation")
        if known is not None:
            evaluated.append(known)
    return evaluated


def eval_sets(call: TrackedCall, reading: CallReading) -> list[tuple[Any, str]]:
    """The call's evaluation sets and their names (see the reading's ``evals``)."""
    evals = reading.evals
    if evals is None:
        return []
    sets = read(evals.sets, call, None)
    if evals.names is None:
        return [(item[0], str(item[1])) for item in _listed(sets) if isinstance(item, tuple) and len(item) == 2]
    names = _listed(read(evals.names, call, None))
    trained_on = root_of(reading.data[0].features, call, None) if reading.data else None
    found = []
    for index, item in enumerate(_listed(sets)):
        if index < len(names):
            found.append((item, str(names[index])))
        elif item is trained_on and evals.training is not None:
            found.append((item, evals.training))
        elif evals.unnamed is not None:
            found.append((item, evals.unnamed.replace("{index}", str(index))))
    return found


def _listed(value: Any) -> list[Any]:
    """A list as it is; one value (LightGBM takes a single ``valid_sets``) as a list of it."""
    return list(value) if isinstance(value, (list, tuple)) else [] if value is None else [value]
