"""Parameters: the hyper-parameters of the user's estimators as MLflow params."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import Any

from pypads.core import Logger, init_defaults, is_estimator, redact, redact_params
from pypads.core import params as estimator_params
from pypads.recording.content.lineage import lineage
from pypads.recording.loggers.comparison import rows
from pypads.run import TrackedCall

# MLflow rejects longer param values.
MAX_PARAM_LENGTH = 6000
PARTIAL_FIT_HOOK = "pypads_partial_fit"
# The param naming, for a later estimator of a class, the one whose params it shares.
OTHER_PARAMS_AS = "other_params_as"
# "<function f at 0x7f3b…>", "<Foo object at 0x…>": an address differs in every run.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


class Parameters(Logger):
    """Logs an estimator's final hyper-parameters, after its fit: ``get_params(deep=True)``
    as params named ``<label>.<param>``, where nested params keep scikit-learn's spelling
    (``Pipeline.clf__C``, ``GridSearchCV.estimator__max_depth``).

    The label is the estimator's class name; another estimator of the same class fitted
    by the script gets ``<Class>_1``, ``<Class>_2``… (the same labels name its metrics,
    see :class:`~pypads.recording.loggers.metric.Metric`). MLflow refuses to change a logged
    param, so an estimator refitted with other values gets a new label too. At most
    ``max_variants`` labels are logged per class; then the tag
    ``pypads.parameters.<Class>`` says that later ones were left out.

    The first estimator of a class logs all its params; a later one with the same param
    names only those that differ from the first's, and ``<label>.other_params_as`` names
    the first (``LogisticRegression_1.C = 0.1``, ``LogisticRegression_1.other_params_as =
    LogisticRegression``). A loop over one hyper-parameter shows that one per model, not
    every default again: 100 trees fitted in a loop logged 1,300 params, and the run's end
    waited 0.3 s for MLflow to take them. A model's child run, when the run compares
    models (see :class:`~pypads.recording.loggers.comparison.ModelRuns`), has all of its own.

    Values are text: arrays as their type, shape and dtype (a data-dependent array such
    as a precomputed Gram matrix would otherwise make every call a new variant),
    functions and classes by their qualified name, objects with Python's default repr by
    their class, and memory addresses never (``<function f at 0x…>`` → ``<function f>``).
    The value of a param named like a secret (``api_token``, ``password``…) is ``***``,
    at any depth: ``kw_args={"api_token": "x"}`` is ``{'api_token': '***'}``, and so is
    a step's in the pipeline's ``steps``; URL credentials in other values are hidden
    (see :func:`pypads.core.privacy.redact`).

    Each fit also sets the run's tags ``estimator_name`` (the class name) and
    ``estimator_class`` (module and class), as MLflow's autolog does: the last
    estimator fitted. On ``partial_fit`` (hook ``pypads_partial_fit``) the params are
    logged once and the metric ``<label>.partial_fit_calls`` counts the calls.
    """

    defaults = {"max_variants": 100}

    def post(self, call: TrackedCall, before: None, options: Mapping[str, Any]) -> None:
        instance = call.instance
        params = params_of(instance)
        if params is None:
            return
        label = log_params(call, instance, params, options["max_variants"])
        if label is not None and call.depth == 0:
            ended = time.time()
            rows(call.run).fitted(label, instance, params, int((ended - (call.duration or 0)) * 1000), int(ended * 1000))
        kind = type(instance)
        call.run.writer.set_tags({"estimator_name": kind.__name__, "estimator_class": f"{kind.__module__}.{kind.__name__}"})
        if PARTIAL_FIT_HOOK in call.hooks and label is not None:
            counts: dict[str, int] = call.run.state(self).setdefault("partial_fit_calls", {})
            counts[label] = count = counts.get(label, 0) + 1
            call.run.writer.log_metric(f"{label}.partial_fit_calls", count, step=count - 1)


def params_of(instance: Any) -> dict[str, str] | None:
    """``instance``'s params as text (secrets redacted); None for what has no
    ``get_params``. A search's are its own settings and, of the estimator it searches,
    only the params set to other than their defaults (see :func:`untouched_defaults`)."""
    if not is_estimator(instance):
        return None
    deep = estimator_params(instance, deep=True)
    # Secrets at any depth first (kw_args={'api_token': …}, a step's params), then in the text.
    params = redact_params({key: param_text(value) for key, value in redact(deep).items()})
    if is_search(instance):
        for key in untouched_defaults(deep, params):
            del params[key]
    return params


def is_search(instance: Any) -> bool:
    """Whether ``instance`` is a hyper-parameter search (``GridSearchCV`` and its kin)."""
    # By its class, not by cv_results_: a search has the same params before its fit (a
    # nested cross_val_score(search, …)) as after, or it would be relabelled.
    searches = hasattr(instance, "cv_results_") or (hasattr(type(instance), "_run_search") and hasattr(instance, "estimator"))
    return searches and is_estimator(instance)


def untouched_defaults(deep: Mapping[str, Any], params: Mapping[str, str]) -> list[str]:
    """The nested params (``estimator__max_depth``) in ``deep`` (``get_params(deep=True)``)
    whose text in ``params`` is that of their default, read from the ``__init__``
    signature of the class they belong to. A search of a ``DecisionTreeClassifier`` has
    the tree's 13 params besides its own 10, and few of them were set: the rest say
    nothing about the search. Defaults come from the signature, not from a fresh
    instance, whose ``__init__`` could do anything."""
    untouched = []
    for key, text in params.items():
        owner_key, _, name = key.rpartition("__")
        if not owner_key:
            continue
        owner = deep.get(owner_key)
        defaults = init_defaults(type(owner)) if owner is not None else {}
        if name in defaults and param_text(defaults[name]) == text:
            untouched.append(key)
    return untouched


def log_params(call: TrackedCall, instance: Any, params: dict[str, str], max_variants: int = 100) -> str | None:
    """Log ``params`` of ``instance`` under its label (a new one if they changed since
    they were logged); the label, or None past ``max_variants`` labels of its class.
    Shared by the loggers that log an estimator's params (a cross-validated estimator's
    too), so that the rules of :class:`Parameters` hold for all of them."""
    known = lineage(call.run)
    state = call.run.state(Parameters)
    logged: dict[str, dict[str, str]] = state.setdefault("logged", {})
    label = known.label(instance)
    if logged.get(label) == params:
        return label
    if label in logged:  # refitted with other values: MLflow keeps the first ones
        label = known.relabel(instance)
    class_name = type(instance).__name__
    if known.labels_of(class_name) > max_variants:
        capped: set[str] = state.setdefault("capped", set())
        if class_name not in capped:
            capped.add(class_name)
            call.run.writer.set_tag(
                f"pypads.parameters.{class_name}",
                f"more than {max_variants} parameter variants: later ones are not logged",
            )
        return None
    logged[label] = params
    call.run.writer.log_params({f"{label}.{name}": value for name, value in _to_log(state, instance, label, params).items()})
    return label


def _to_log(state: dict[str, Any], instance: Any, label: str, params: dict[str, str]) -> dict[str, str]:
    """All of ``params`` for the first estimator of its class; for a later one, those
    that differ from the first's, and which one it shares the others with."""
    firsts: dict[type, tuple[str, dict[str, str]]] = state.setdefault("firsts", {})
    first_label, first_params = firsts.setdefault(type(instance), (label, params))
    if first_label == label or first_params.keys() != params.keys():  # another pipeline's steps: all
        return params
    differing = {name: value for name, value in params.items() if first_params.get(name) != value}
    return {**differing, OTHER_PARAMS_AS: first_label}


def param_text(value: Any) -> str:
    """A param value as text that is the same in every run of the script."""
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if isinstance(shape, tuple) and dtype is not None:
        return f"<{type(value).__name__} shape={shape} dtype={dtype}>"
    if isinstance(value, type) or (callable(value) and hasattr(value, "__qualname__") and not hasattr(value, "get_params")):
        return getattr(value, "__qualname__", type(value).__qualname__)
    if type(value).__repr__ is object.__repr__:
        return type(value).__qualname__
    try:
        text = str(value)
    except Exception:  # a broken __str__ must not cost the other params
        text = type(value).__qualname__
    if " at 0x" in text:  # the expression is the cost: most values have no address
        text = _ADDRESS.sub("", text)
    return text if len(text) <= MAX_PARAM_LENGTH else text[: MAX_PARAM_LENGTH - 3] + "..."
