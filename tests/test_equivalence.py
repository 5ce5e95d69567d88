"""Tracking never changes scikit-learn's behaviour.

For every estimator of ``sklearn.utils.all_estimators()`` that can be built with its
defaults and fit on a small dataset, the results of its methods (``predict``,
``transform``, ``predict_proba``, ``decision_function``, ``fit_predict``,
``fit_transform``, ``score``…) with tracking are identical — values, dtypes, shapes,
the exceptions raised — to those without; which methods exist (``hasattr``) is the
same; and a tracked estimator survives ``pickle`` and ``clone``.

Which estimators take part is decided by trying, without pypads: an estimator is left
out only if its default construction raises ``TypeError`` (meta-estimators that need
an estimator argument), if it cannot be fit on the small data (text, dict or 1-d
inputs, label-only transformers…), or if two untracked runs with ``random_state=0``
do not agree with each other (then there is nothing exact to compare against). An
estimator that cannot be built or fit without pypads must fail with the same exception
type with pypads.

All untracked results are computed first (in the setup of the first test, ~15 s), with
scikit-learn unpatched; then a single tracker (one MLflow run, the default loggers and
events; see ``TRACKER_CONFIG``) serves every comparison. ``PYPADS_STRICT=1`` (set by
conftest) turns any logger error into a failure.
"""

from __future__ import annotations

import contextlib
import pickle
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mlflow
import numpy as np
import pytest
from mlflow.tracking import MlflowClient
from scipy import sparse
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.datasets import load_iris
from sklearn.utils import all_estimators
from threadpoolctl import threadpool_limits

import pypads.tracker
from pypads import PyPads
from pypads.core.errors import LoggerWarning

MIN_COMPARED = 100
# The default config: every default event, nested calls tracked at any depth. The
# heaviest case, MiniBatchSparsePCA (~4,000 nested LassoLars.fit calls), takes ~15 s.
TRACKER_CONFIG: dict[str, Any] = {}

# Called after ``fit`` on the fitted estimator, when it has them.
FITTED_METHODS = (
    "predict", "predict_proba", "predict_log_proba", "decision_function",
    "score_samples", "transform", "score",
)
# Called on a fresh, unfitted copy: they fit themselves.
FITTING_METHODS = ("fit_predict", "fit_transform")
# What pickle round-trips are checked with (first one the estimator has).
PICKLE_METHODS = ("predict", "transform", "predict_proba", "decision_function", "score_samples")


# --- the small dataset ----------------------------------------------------------------
def _dataset() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    iris = load_iris()
    rows = np.r_[0:20, 50:70, 100:120]  # 60 samples, 20 per class, 4 non-negative features
    X = np.ascontiguousarray(iris.data[rows], dtype=np.float64)
    y_class = iris.target[rows].copy()
    rng = np.random.RandomState(0)
    y_reg = X @ np.array([0.5, -1.0, 2.0, 0.3]) + 0.1 * rng.randn(len(X))
    y_multi = np.c_[y_reg, X[:, 0] - X[:, 2]]
    return X, y_class, y_reg, y_multi


X, Y_CLASS, Y_REG, Y_MULTI = _dataset()


TARGETS: dict[str, np.ndarray | None] = {"labels": Y_CLASS, "values": Y_REG, "two columns": Y_MULTI, "none": None}


def target_choices(estimator: Any) -> tuple[str, ...]:
    """The targets an estimator is tried with, in order; the first one it can be fit
    with is used: labels for classifiers; values for regressors, else two columns
    (multi-output-only ones, CCA…); for other estimators none, else labels (supervised
    feature selection…), else two columns (PLSSVD)."""
    try:
        if is_classifier(estimator):
            return ("labels",)
        if is_regressor(estimator):
            return ("values", "two columns")
    except Exception:  # broken tags: fitting will say what is wrong
        pass
    return ("none", "labels", "two columns")


def _fit_args(target: str) -> tuple[Any, ...]:
    y = TARGETS[target]
    return (X.copy(),) if y is None else (X.copy(), y.copy())


# --- observing an estimator -----------------------------------------------------------
@dataclass(frozen=True)
class Raised:
    """A method call that raised: compared by exception type."""

    kind: str


def snapshot(value: Any) -> Any:
    """A copy of a method's result that can be compared exactly later."""
    if sparse.issparse(value):
        return ("sparse", type(value).__name__, value.toarray().copy())
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(snapshot(item) for item in value))
    if hasattr(value, "to_numpy"):  # pandas output
        return ("pandas", type(value).__name__, np.array(value.to_numpy(), copy=True))
    if isinstance(value, (np.ndarray, np.generic, int, float, bool, complex, str)) or value is None:
        return np.array(value, copy=True)
    return ("object", type(value).__name__)


def assert_same(expected: Any, actual: Any, where: str) -> None:
    """Exact equality of two snapshots (NaNs in the same places count as equal)."""
    if isinstance(expected, Raised) or isinstance(actual, Raised):
        assert expected == actual, f"{where}: untracked gave {expected!r}, tracked gave {actual!r}"
    elif isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray), f"{where}: {actual!r} is not an array"
        np.testing.assert_array_equal(actual, expected, strict=True, err_msg=where)
    elif isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected), f"{where}: {actual!r} != {expected!r}"
        for index, (left, right) in enumerate(zip(expected, actual)):
            assert_same(left, right, f"{where}[{index}]")
    else:
        assert expected == actual, f"{where}: {actual!r} != {expected!r}"


def is_same(expected: Any, actual: Any) -> bool:
    try:
        assert_same(expected, actual, "")
    except AssertionError:
        return False
    return True


@dataclass
class Observation:
    """Everything an estimator showed on the small data."""

    fitted: Any = None
    available: dict[str, bool] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)


def _call(method: Callable[..., Any], *args: Any) -> Any:
    try:
        return snapshot(method(*args))
    except Exception as error:
        return Raised(type(error).__qualname__)


def build(factory: type) -> Any:
    """The estimator with its defaults, and ``random_state=0`` where it has one."""
    estimator = factory()
    if "random_state" in estimator.get_params(deep=False):
        estimator.set_params(random_state=0)
    return estimator


def observe(prototype: Any, y: str) -> Observation:
    """Fit a fresh clone of ``prototype`` with target ``y`` and call every method it
    has; raises when ``fit`` itself fails."""
    seen = Observation()
    estimator = clone(prototype)
    estimator.fit(*_fit_args(y))
    seen.fitted = estimator
    for name in FITTED_METHODS:
        seen.available[name] = hasattr(estimator, name)
        if not seen.available[name]:
            continue
        if name == "score":
            seen.results[name] = _call(estimator.score, *_fit_args(y))
        else:
            seen.results[name] = _call(getattr(estimator, name), X.copy())
    for name in FITTING_METHODS:
        fresh = clone(prototype)
        seen.available[name] = hasattr(fresh, name)
        if seen.available[name]:
            seen.results[name] = _call(getattr(fresh, name), *_fit_args(y))
    return seen


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Silence scikit-learn's warnings (convergence, deprecations…) but not pypads' (a
    failing logger is an error here even where ``PYPADS_STRICT`` is off), and run BLAS
    and OpenMP single-threaded: on tiny data threads only cost time (a lot of it on a
    busy machine), and both runs of every comparison use the same setting."""
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        warnings.simplefilter("ignore")
        warnings.simplefilter("error", LoggerWarning)
        yield


@dataclass
class Baseline:
    """An estimator's untracked behaviour, or why it is not compared."""

    prototype: Any = None
    target: str = "none"
    observation: Observation | None = None
    skip: str | None = None
    failures: tuple[tuple[str | None, Raised], ...] = ()
    """How building (target None) or fitting with each target failed, untracked."""


def baseline_of(name: str, factory: type) -> Baseline:
    """Build and observe an estimator twice, untracked; or say why it is left out."""
    try:
        prototype = build(factory)
    except TypeError as error:
        return Baseline(skip=f"{name}: needs constructor arguments ({error})", failures=((None, Raised("TypeError")),))
    failures: list[str] = []
    raised: list[tuple[str | None, Raised]] = []
    for target in target_choices(prototype):
        try:
            first = observe(prototype, target)
            break
        except Exception as error:
            raised.append((target, Raised(type(error).__qualname__)))
            failure = f"{type(error).__name__}: {str(error)[:160]}"
            if failure not in failures:
                failures.append(failure)
    else:
        return Baseline(skip=f"{name}: cannot be fit on the small data without pypads ({' / '.join(failures)})",
                        failures=tuple(raised))
    second = observe(prototype, target)
    differing = [method for method in first.results if not is_same(first.results[method], second.results[method])]
    if differing:
        return Baseline(skip=f"{name}: not reproducible without pypads "
                             f"({', '.join(differing)} differ between two fits)")
    return Baseline(prototype=prototype, target=target, observation=first)


ESTIMATORS: dict[str, type] = dict(all_estimators())


# --- fixtures -----------------------------------------------------------------------------
@dataclass
class Progress:
    compared: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def baselines() -> dict[str, Baseline]:
    """The untracked behaviour of every estimator, computed before anything is patched."""
    assert pypads.tracker.in_charge() is None, "a PyPads from another test is still active"
    assert mlflow.active_run() is None
    with quiet():
        return {name: baseline_of(name, factory) for name, factory in ESTIMATORS.items()}


@pytest.fixture(scope="module")
def progress() -> Progress:
    return Progress()


@pytest.fixture(scope="module")
def equivalence_tracker(baselines: dict[str, Baseline], tmp_path_factory: pytest.TempPathFactory) -> Iterator[PyPads]:
    """One tracker (one run, see ``TRACKER_CONFIG``) for all comparisons; it depends on
    the baselines so that they are computed before anything is patched."""
    store = tmp_path_factory.mktemp("equivalence") / "mlflow.db"
    tracker = PyPads(uri=f"sqlite:///{store}", name="equivalence", config=TRACKER_CONFIG)
    try:
        yield tracker
    finally:
        tracker.deactivate()
        while mlflow.active_run() is not None:
            mlflow.end_run()


# --- the tests ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_tracking_does_not_change_estimator(
    name: str, baselines: dict[str, Baseline], equivalence_tracker: PyPads, progress: Progress
) -> None:
    baseline = baselines[name]
    if baseline.failures:
        # Not comparable by results, but tracking must fail it the very same way.
        with quiet():
            for target, expected_failure in baseline.failures:
                assert _fails_with(name, target) == expected_failure, f"{name} with target {target}"
        return
    if baseline.skip is not None:
        pytest.skip(baseline.skip)
    assert equivalence_tracker.run_id is not None, "the tracker has no run"
    expected = baseline.observation
    assert expected is not None

    with quiet():
        prototype = build(ESTIMATORS[name])
        tracked = observe(prototype, baseline.target)
        for method in FITTED_METHODS + FITTING_METHODS:
            assert tracked.available[method] == expected.available[method], (
                f"hasattr({name}, {method!r}) is {tracked.available[method]} tracked, "
                f"{expected.available[method]} untracked"
            )
        assert tracked.results.keys() == expected.results.keys()
        for method, value in expected.results.items():
            assert_same(value, tracked.results[method], f"{name}.{method}")

        # pickle: the tracked, fitted estimator round-trips to one that predicts the same.
        fitted = tracked.fitted
        restored = pickle.loads(pickle.dumps(fitted))
        assert type(restored) is type(fitted)
        for method in PICKLE_METHODS:
            if method in tracked.results and not isinstance(tracked.results[method], Raised):
                again = _call(getattr(restored, method), X.copy())
                assert_same(tracked.results[method], again, f"unpickled {name}.{method}")
                break

        # clone: works on the tracked estimator (fitted or not) and keeps its parameters.
        for original in (prototype, fitted):
            copy = clone(original)
            assert type(copy) is type(original)
            assert_same_params(original.get_params(deep=False), copy.get_params(deep=False), name)
    progress.compared.append(name)


def _fails_with(name: str, target: str | None) -> Raised | None:
    """How building (``target`` None) or fitting the estimator fails now, if it does."""
    try:
        estimator = build(ESTIMATORS[name])
        if target is not None:
            estimator.fit(*_fit_args(target))
    except Exception as error:
        return Raised(type(error).__qualname__)
    return None


def assert_same_params(expected: dict[str, Any], actual: dict[str, Any], name: str) -> None:
    assert expected.keys() == actual.keys(), f"{name}: clone changed the parameter names"
    for key, value in expected.items():
        other = actual[key]
        if isinstance(value, float) and np.isnan(value):
            assert isinstance(other, float) and np.isnan(other), f"{name}.{key}: {other!r} != nan"
        elif hasattr(value, "get_params"):  # a default sub-estimator or kernel is cloned
            assert type(other) is type(value) and repr(other) == repr(value), f"{name}.{key}: {other!r} != {value!r}"
        else:
            assert other == value or repr(other) == repr(value), f"{name}.{key}: {other!r} != {value!r}"


def test_enough_estimators_were_compared_and_tracked(
    baselines: dict[str, Baseline], equivalence_tracker: PyPads, progress: Progress, request: pytest.FixtureRequest
) -> None:
    """Guards against passing on nothing, and checks that tracking really was on: every
    compared estimator's fit left its call folder and parameters in the MLflow run."""
    comparable = sorted(name for name, baseline in baselines.items() if baseline.skip is None)
    assert len(comparable) >= MIN_COMPARED, (
        f"only {len(comparable)} of {len(baselines)} estimators could be compared: "
        + "; ".join(f"{name}: {baseline.skip}" for name, baseline in sorted(baselines.items()) if baseline.skip)
    )
    selected = {item.callspec.params["name"] for item in request.session.items  # type: ignore[attr-defined]
                if getattr(item, "originalname", None) == "test_tracking_does_not_change_estimator"
                and getattr(item, "module", None) is request.module}
    if set(comparable) - selected:
        pytest.skip("not every estimator's comparison was selected in this session")
    assert sorted(progress.compared) == comparable, (
        f"comparisons that did not pass: {sorted(set(comparable) - set(progress.compared))}"
    )

    run_id = equivalence_tracker.run_id
    assert run_id is not None
    equivalence_tracker.end_run()
    client = MlflowClient(equivalence_tracker.store.tracking_uri)
    run = client.get_run(run_id)
    assert run.info.status == "FINISHED"
    failures = {key: value for key, value in run.data.tags.items() if key.startswith("pypads.failure.")}
    assert not failures, failures
    # one calls/<Class>.<method>.jsonl per function called
    files = [Path(item.path).name.removesuffix(".jsonl") for item in client.list_artifacts(run_id, "calls")]
    fitted_classes = {name.rsplit(".", 1)[0] for name in files if name.endswith((".fit", ".fit_predict", ".fit_transform"))}
    assert set(comparable) <= fitted_classes, f"fits not tracked: {sorted(set(comparable) - fitted_classes)}"
    param_classes = {key.split(".", 1)[0] for key in run.data.params}
    with_params = {name for name in comparable if baselines[name].prototype.get_params(deep=False)}
    assert with_params <= param_classes, f"parameters not tracked: {sorted(with_params - param_classes)}"
