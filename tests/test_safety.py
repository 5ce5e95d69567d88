"""Tracking never breaks user code, and bad input is refused at PyPads() with a clear error."""

from __future__ import annotations

import asyncio
import gc
import threading
import traceback
import warnings
import weakref

import numpy as np
import pytest
from sklearn import datasets, metrics
from sklearn.tree import DecisionTreeClassifier

from pypads import ConfigError, Logger, LoggerFailure, LoggerWarning, PyPads
from pypads.core.calls import current_call
from pypads.recording.defaults import DEFAULT_CONFIG
from pypads.to_mlflow.journal import JournalReader

X, y = datasets.load_iris(return_X_y=True)


class Exploding(Logger):
    """A logger that fails in both phases."""

    def pre(self, call, options):
        raise RuntimeError("pre exploded")

    def post(self, call, before, options):
        raise RuntimeError("post exploded")


class Recorder(Logger):
    """Remembers what it saw (names, depths, threads) for assertions."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def post(self, call, before, options):
        self.seen.append((call.name, call.depth, threading.current_thread().name, call.exception))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"config": {"evnets": {}}}, "unknown key 'evnets'"),
        ({"config": {"events": {"params": {"on": ["pypads_fit"]}}}}, "unknown event 'params'"),
        ({"config": {"events": {"input": {"on": ["pypads_fit"], "with": {"_pypads_colour": 1}}}}}, "no option 'colour'"),
        ({"config": {"recursion_depth": "deep"}}, "$.recursion_depth"),
        ({"logging_fns": {"parameters": print}}, "logging_fns['parameters']"),
        ({"logging_fns": {"hardware": {1, 2}}}, "is not a pypads logger"),
        ({"init_run_fns": [42]}, "init_run_fns: 42 is neither a RunLogger nor callable"),
    ],
)
def test_bad_input_is_one_clear_error_before_anything_changes(kwargs, message, store_uri):
    fit_before = vars(DecisionTreeClassifier)["fit"]
    with pytest.raises(ConfigError) as raised:
        PyPads(uri=store_uri, **kwargs)
    assert message in str(raised.value)
    assert vars(DecisionTreeClassifier)["fit"] is fit_before


def test_original_exception_reaches_the_user_unchanged(make_tracker):
    recorder = Recorder()
    make_tracker(logging_fns={"output": recorder})
    model = DecisionTreeClassifier()
    with pytest.raises(ValueError, match="does not match number of samples") as raised:
        model.fit(X, y[:10])
    # the traceback still reaches sklearn's own frames, and loggers saw the very exception
    assert any("sklearn" in frame.filename for frame in traceback.extract_tb(raised.value.__traceback__))
    assert recorder.seen[-1][0] == "DecisionTreeClassifier.fit"
    assert recorder.seen[-1][3] is raised.value


def test_failing_logger_is_one_warning_and_a_tag_and_the_call_runs_once(make_tracker, read_run, monkeypatch):
    monkeypatch.setenv("PYPADS_STRICT", "0")
    calls = []

    class CountingTree(DecisionTreeClassifier):
        def fit(self, X, y, sample_weight=None, check_input=True):
            calls.append(1)
            return super().fit(X, y, sample_weight=sample_weight, check_input=check_input)

    tracker = make_tracker(logging_fns={"parameters": Exploding()})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = CountingTree(random_state=0).fit(X, y)
        second = CountingTree(random_state=0).fit(X, y)
    assert (first.predict(X) == second.predict(X)).all()
    assert len(calls) == 2  # exactly once per user call, though two nested fits are tracked
    logger_warnings = [w for w in caught if issubclass(w.category, LoggerWarning)]
    assert len(logger_warnings) == 1
    assert "Exploding failed" in str(logger_warnings[0].message)
    run_id = tracker.run_id
    tracker.end_run()
    assert "pre exploded" in read_run(run_id).tags["pypads.failure.Exploding"]


class Fatal(BaseException):
    """What pytest.fail, asyncio.CancelledError or a trio timeout look like to a logger."""


class Raising(Logger):
    """A logger whose pre raises the exception it is given."""

    def __init__(self, error):
        super().__init__()
        self.error = error

    def pre(self, call, options):
        raise self.error

    def post(self, call, before, options):
        raise self.error


def test_a_logger_raising_a_base_exception_is_a_warning_and_a_tag(make_tracker, read_run, monkeypatch):
    monkeypatch.setenv("PYPADS_STRICT", "0")
    tracker = make_tracker(logging_fns={"parameters": Raising(Fatal("logger gave up"))})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = DecisionTreeClassifier(random_state=0).fit(X, y)
    assert metrics.accuracy_score(y, model.predict(X)) == 1.0
    assert [str(w.message) for w in caught if issubclass(w.category, LoggerWarning)] == [
        "pypads logger Raising failed in pre of DecisionTreeClassifier.fit (Fatal: logger gave up); the tracked code was not affected"]
    run_id = tracker.run_id
    tracker.end_run()
    assert read_run(run_id).tags["pypads.failure.Raising"] == "pre of DecisionTreeClassifier.fit: Fatal: logger gave up"


@pytest.mark.parametrize("error", [KeyboardInterrupt(), SystemExit(3)], ids=["KeyboardInterrupt", "SystemExit"])
def test_ctrl_c_and_exit_in_a_logger_still_stop_the_program(make_tracker, monkeypatch, error):
    monkeypatch.setenv("PYPADS_STRICT", "0")
    make_tracker(logging_fns={"parameters": Raising(error)})
    with pytest.raises(type(error)):
        DecisionTreeClassifier().fit(X, y)


def test_strict_mode_raises_logger_errors(make_tracker, monkeypatch):
    monkeypatch.setenv("PYPADS_STRICT", "1")
    make_tracker(logging_fns={"parameters": Exploding()})
    with pytest.raises(LoggerFailure, match="Exploding failed in pre of DecisionTreeClassifier.fit"):
        DecisionTreeClassifier().fit(X, y)


def test_unreachable_store_warns_and_the_script_goes_on(monkeypatch):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "2")
    with pytest.warns(UserWarning, match="could not open an MLflow run"):
        tracker = PyPads(uri="http://127.0.0.1:9", name="nowhere")
    journal = tracker.writer.journal
    try:
        assert tracker.run_id is None
        model = DecisionTreeClassifier(random_state=0).fit(X, y)
        assert metrics.accuracy_score(y, model.predict(X)) == 1.0
    finally:
        tracker.deactivate()
    # Nothing is lost: the journal keeps it for the next PyPads() that reaches the store.
    pending = JournalReader(journal.folder).read_new(journal.committed())
    assert pending.params["DecisionTreeClassifier.random_state"] == "0"
    assert [key for key, *_ in pending.metrics].count("DecisionTreeClassifier.accuracy_score_X") == 1
    assert journal.status() == "FINISHED"
    journal.discard()


def test_unpicklable_arguments_are_summarised_not_fatal(make_tracker, read_run):
    class WithCallback(DecisionTreeClassifier):
        def fit(self, X, y, callback=None):
            return super().fit(X, y)

    tracker = make_tracker(config={"events": {"input": {"on": ["pypads_fit"], "with": {"_pypads_write_format": "pickle"}}}})
    model = WithCallback(random_state=0).fit(X, y, callback=threading.Lock())
    assert model.predict(X[:1]).shape == (1,)
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    files = run.artifacts("calls")
    assert "calls/0001_WithCallback.fit/input/X.pickle" in files
    summary = run.artifact_text("calls/0001_WithCallback.fit/input/callback.summary.json")
    assert '"summary_of": "not picklable"' in summary and "lock" in summary


def test_threads_have_their_own_call_stacks(make_tracker):
    recorder = Recorder()
    make_tracker(logging_fns={"output": recorder})

    def fit_three():
        for _ in range(3):
            DecisionTreeClassifier(max_depth=2).fit(X, y)

    threads = [threading.Thread(target=fit_three, name=f"worker-{i}") for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    fits = [entry for entry in recorder.seen if entry[0] == "DecisionTreeClassifier.fit"]
    assert len(fits) == 6
    assert {entry[1] for entry in fits} == {0}  # no thread saw the other's call as its parent
    assert {entry[2] for entry in fits} == {"worker-0", "worker-1"}


def test_asyncio_tasks_have_their_own_call_stacks(make_tracker):
    depths = []

    class Probe(Logger):
        def pre(self, call, options):
            depths.append(call.depth)

    make_tracker(logging_fns={"parameters": Probe()})

    async def fit():
        await asyncio.sleep(0)
        return DecisionTreeClassifier(max_depth=1).fit(X, y)

    async def main():
        await asyncio.gather(*(fit() for _ in range(4)))

    asyncio.run(main())
    assert depths == [0, 0, 0, 0]
    assert current_call() is None


def test_recursion_depth_limits_nested_tracking(make_tracker):
    recorder = Recorder()
    make_tracker(logging_fns={"output": recorder}, config={
        "events": {"output": {"on": ["pypads_fit", "pypads_transform"]}}, "recursion_depth": 0,
    })
    from sklearn.preprocessing import StandardScaler

    StandardScaler().fit_transform(X)  # fit_transform calls fit: nested, depth 1
    assert [name for name, *_ in recorder.seen] == ["StandardScaler.fit_transform"]


class Refitting(DecisionTreeClassifier):
    """fit -> fit_transform -> fit again on the same object (another name in between)."""

    def fit(self, X, y, sample_weight=None, check_input=True, again=True):
        if again:
            self.fit_transform(X, y)
        return super().fit(X, y, sample_weight=sample_weight, check_input=check_input)

    def fit_transform(self, X, y):
        return self.fit(X, y, again=False)


@pytest.mark.parametrize(("identity", "expected"), [
    (False, ["Refitting.fit", "Refitting.fit_transform", "Refitting.fit"]),
    (True, ["Refitting.fit_transform", "Refitting.fit"]),
])
def test_recursion_identity_skips_the_same_method_on_the_same_object(make_tracker, identity, expected):
    recorder = Recorder()
    make_tracker(logging_fns={"output": recorder}, config={
        # every depth: this is about recursion_identity alone, not the event's default depth 0
        "events": {"output": {"on": ["pypads_fit"], "depth": -1}}, "recursion_identity": identity,
    })
    Refitting().fit(X, y)
    assert [name for name, *_ in recorder.seen] == expected  # in order of completion


def test_super_chain_is_one_call(make_tracker, read_run):
    from sklearn.linear_model import RidgeCV

    tracker = make_tracker()
    RidgeCV().fit(X, y)  # RidgeCV.fit calls _BaseRidgeCV.fit through super()
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    assert [path for path in run.artifacts("calls") if "RidgeCV.fit" in path] == ["calls/RidgeCV.fit.jsonl"]
    assert [line.count('"call": ') for line in run.artifact_text("calls/RidgeCV.fit.jsonl").splitlines()] == [0, 1, 1]


@pytest.mark.parametrize("events", [None, {"calls": {"on": ["pypads_fit"]}}], ids=["default", "call recording"])
def test_tracking_keeps_no_reference_to_the_users_data(make_tracker, events):
    make_tracker(config=None if events is None else {"events": {**DEFAULT_CONFIG["events"], **events}})
    # Larger than max_bytes, so Input writes a summary with a digest of the whole array.
    data = np.random.RandomState(0).rand(20_000, 10)
    target = (data[:, 0] > 0.5).astype(int)
    model = DecisionTreeClassifier(max_depth=2).fit(data, target)
    data_ref, target_ref = weakref.ref(data), weakref.ref(target)
    del data, target
    gc.collect()
    assert data_ref() is None and target_ref() is None
    assert model.predict(np.zeros((1, 10))).shape == (1,)
