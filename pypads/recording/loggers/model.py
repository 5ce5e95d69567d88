"""Model: the final fitted state of each estimator the script fitted, saved as an MLflow
model (sklearn flavour, pyfunc-loadable, with a signature) among the run's logged models."""

from __future__ import annotations

import functools
import pickle
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import cloudpickle
from blake3 import blake3

from pypads.core import Logger, redact
from pypads.recording.content.call_values import fitted_model
from pypads.recording.content.catalogue import data_arguments, describe
from pypads.recording.content.lineage import lineage
from pypads.recording.loggers.parameters import params_of
from pypads.recording.provenance import distribution_of
from pypads.run import RunContext, TrackedCall

FIT_HOOK = "pypads_fit"
PARTIAL_FIT_HOOK = "pypads_partial_fit"


def model_of(estimator: Any) -> tuple[Any, str] | None:
    """The model a fitted ``estimator`` predicts with, and the suffix of its name: a
    search's refit ``best_estimator_``, else the estimator."""
    if hasattr(estimator, "cv_results_"):
        best = getattr(estimator, "best_estimator_", None)
        return (best, "-best_estimator") if best is not None else None
    return estimator, ""


@dataclass(frozen=True)
class _Fit:
    """What a model keeps of the call that fitted it: no data, only its description."""

    features: dict[str, Any] | None
    targets: dict[str, Any] | None
    call: str

    @classmethod
    def of(cls, call: TrackedCall) -> _Fit:
        features, targets = data_arguments(call)
        return cls(describe(features), describe(targets), f"{call.name}#{call.number}")


def _described(fit: _Fit) -> Callable[[], _Fit]:
    """A fit described already (at its call), as :meth:`Model._save` asks for one."""
    return lambda: fit


class Model(Logger):
    """Saves each estimator fitted by a top-level call (not one a library fitted inside
    another) as an MLflow model named by the label its params and metrics have
    (``DecisionTreeClassifier``; the second estimator of one class
    ``DecisionTreeClassifier_1``; a search's refit model ``GridSearchCV-best_estimator``),
    in its state at the run's end: a refit replaces the state saved before, and a state
    equal to one saved already is not saved again. An estimator trained by
    ``partial_fit`` (hook ``pypads_partial_fit``) is pickled once, as the run ends.

    A transformer (no ``predict``) is saved too, without MLflow's pyfunc flavour:
    ``mlflow.sklearn.load_model`` gives it back, fitted, to ``transform`` with.

    On the calling thread this costs a cloudpickle of the estimator and one append to
    the journal; the uploader builds the MLflow model as the run ends (see
    ``docs/run.md``). At most ``max_models`` estimators per run; the tag
    ``pypads.models`` says if more were left out. An estimator that cannot be pickled
    gets the tag ``pypads.models.<name>`` instead, and so does one with a secret among
    its params at any depth (``kw_args={"api_token": …}``, see
    :func:`pypads.core.privacy.redact`): its pickle would keep the secret in clear.
    """

    defaults = {"max_models": 20}

    def post(self, call: TrackedCall, before: None, options: Mapping[str, Any]) -> None:
        if call.depth != 0 or call.exception is not None:
            return
        reading = call.reading
        if reading is not None and reading.model is not None:  # a native train's model, in the flavour its mapping names
            model = fitted_model(call)
            if model is not None and FIT_HOOK in call.hooks:
                self._save(call.run, model, functools.partial(_Fit.of, call), options["max_models"], reading.flavour)
            return
        if call.instance is None:
            return
        if FIT_HOOK in call.hooks:
            self._save(call.run, call.instance, functools.partial(_Fit.of, call), options["max_models"])
        elif PARTIAL_FIT_HOOK in call.hooks:
            self._save_at_end(call, options["max_models"])

    def _save_at_end(self, call: TrackedCall, limit: int) -> None:
        """An estimator trained by ``partial_fit`` is saved once, as the run ends: a
        pickle per batch would cost a loop more than its training."""
        pending: dict[int, tuple[Any, _Fit]] = call.run.state(self).setdefault("partial", {})
        entry = pending.get(id(call.instance))
        if entry is not None and entry[0]() is call.instance:
            return
        run = call.run
        if not pending:
            def save_pending() -> None:
                for reference, fit in list(pending.values()):
                    instance = reference()
                    if instance is not None:
                        self._save(run, instance, _described(fit), limit)
            run.on_end(save_pending)
        try:
            pending[id(call.instance)] = (weakref.ref(call.instance), _Fit.of(call))
        except TypeError:  # no weak references: saved at once, in its state after this batch
            self._save(run, call.instance, functools.partial(_Fit.of, call), limit)

    def _save(self, run: RunContext, instance: Any, fit_of: Callable[[], _Fit], limit: int,
              flavour: str | None = None) -> None:
        """Pickle ``instance`` into the journal, unless this very state is saved already:
        a search twice, as itself (to load and predict with, as autolog saves it) and as
        the model it found (its refit ``best_estimator_``). ``fit_of`` describes the fit's
        data, asked only for a model that is saved (past ``max_models`` none is)."""
        state = run.state(self)
        key, name = self._identify(run, instance, state, limit)
        if key is None:
            return
        fit = fit_of()
        # The label it has now (a refit with other params has a new one): the child run
        # of that label, if the run compares models, is the model's source run.
        label = lineage(run).label(instance)
        if hasattr(instance, "cv_results_"):
            self._save_one(run, instance, key, name, label, fit)
        saved = model_of(instance)
        if saved is not None:
            self._save_one(run, saved[0], key + saved[1], name + saved[1], label, fit, refit=saved[0] is not instance,
                           flavour=flavour)

    def _save_one(self, run: RunContext, estimator: Any, key: str, name: str, label: str, fit: _Fit,
                  refit: bool = False, flavour: str | None = None) -> None:
        state = run.state(self)
        if redact(estimator) is not estimator:  # its pickle would keep the secret in clear
            run.writer.set_tag(f"pypads.models.{name}", "not saved: a param holds a secret (api_token, password…), "
                               "which the saved model would keep in clear")
            return
        try:
            pickled = cloudpickle.dumps(estimator)
        except (pickle.PicklingError, TypeError, AttributeError) as error:
            run.writer.set_tag(f"pypads.models.{name}", f"not saved: it cannot be pickled ({error})"[:5000])
            return
        digest = blake3(pickled).hexdigest()
        latest: dict[str, str] = state.setdefault("latest", {})  # key -> digest of its state saved last
        if latest.get(key) == digest or (key not in latest and digest in latest.values()):
            return  # this very state is saved already (a refit on the same data, a twin)
        latest[key] = digest
        run.writer.log_entry({
            "kind": "model", "key": key, "name": name, "module": type(estimator).__module__,
            "label": label,
            "input": fit.features, "output": fit.targets,
            # MLflow's sklearn pyfunc can only call predict: a transformer (a scaler, a
            # Pipeline ending in one) is saved for mlflow.sklearn alone, as save_model does.
            "predicts": hasattr(estimator, "predict"),
            # What installed its library, for the model's requirements (xgboost-cpu for xgboost).
            "distribution": distribution_of(estimator, run.mappings),
            # MLflow's flavour for the library's own models (mapping files' "flavour"); sklearn's if None.
            "flavour": flavour,
            # A search's refit model: its own params, as fitted, beside the search's settings on its page.
            "params": (params_of(estimator) or {}) if refit else {},
            "tags": {"estimator_name": type(estimator).__name__,
                     "estimator_class": f"{type(estimator).__module__}.{type(estimator).__qualname__}",
                     "pypads.call": fit.call},
        }, pickled)

    def _identify(self, run: RunContext, instance: Any, state: dict[str, Any], limit: int) -> tuple[str | None, str]:
        """The key and name of the fitted object: the same ones for a refit of it."""
        known: dict[int, tuple[Any, str, str]] = state.setdefault("known", {})
        entry = known.get(id(instance))
        if entry is not None and entry[0]() is instance:
            return entry[1], entry[2]
        # Counted, not len(known): an id is reused once its object is gone, and the
        # entry it overwrites must not make two estimators share a key.
        if state.get("count", 0) >= limit:
            if not state.get("over"):
                state["over"] = True
                run.writer.set_tag("pypads.models", f"more than {limit} estimators: later ones are not saved")
            return None, ""
        name = lineage(run).label(instance)  # as its params and metrics name it
        try:
            reference: Any = weakref.ref(instance)
        except TypeError:  # no weak references: the id alone (kept for the run's life)
            reference = lambda: instance  # noqa: E731
        state["count"] = state.get("count", 0) + 1
        key = str(state["count"])
        known[id(instance)] = (reference, key, name)
        return key, name
