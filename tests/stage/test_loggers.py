"""The loggers' results in MLflow: values, summaries, exceptions, hardware, batching."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import writer_for
from mlflow.tracking import MlflowClient
from sklearn import datasets
from sklearn.tree import DecisionTreeClassifier

from pypads import Logger
from pypads.recording.content import npy
from pypads.recording.content.serialize import WriteFormats, serialize
from pypads.recording.provenance import provenance

X, y = datasets.load_iris(return_X_y=True)


def test_large_values_are_summarised_with_shape_dtype_and_digest(make_tracker, read_run):
    tracker = make_tracker(config={"events": {"input": {"on": ["pypads_fit"], "with": {"max_bytes": 1000, "layout": "call"}}}})
    DecisionTreeClassifier().fit(X, y)
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    summary = json.loads(run.artifact_text("calls/0001_DecisionTreeClassifier.fit/input/X.summary.json"))
    assert summary["shape"] == [150, 4]
    assert summary["dtype"] == "float64"
    assert summary["blake3"] == npy.digest(X)  # the name call recording gives the same array
    assert summary["summary_of"] == "larger than max_bytes=1000"
    assert "calls/0001_DecisionTreeClassifier.fit/input/y.summary.json" in run.artifacts()  # 1,200 bytes


def test_pickle_format_round_trips_the_value(make_tracker, read_run, tmp_path):
    import cloudpickle

    tracker = make_tracker(config={"events": {"input": {"on": ["pypads_fit"], "with": {"_pypads_write_format": "pickle"}}}})
    DecisionTreeClassifier().fit(X, y)
    run_id = tracker.run_id
    tracker.end_run()
    path = read_run(run_id).client.download_artifacts(run_id, "calls/0001_DecisionTreeClassifier.fit/input/X.pickle", str(tmp_path))
    with open(path, "rb") as handle:
        np.testing.assert_array_equal(cloudpickle.load(handle), X)


def test_failed_call_writes_its_exception(make_tracker, read_run):
    tracker = make_tracker()
    with pytest.raises(ValueError):
        DecisionTreeClassifier().fit(X, y[:3])
    run_id = tracker.run_id
    tracker.end_run()
    last = read_run(run_id).artifact_text("calls/DecisionTreeClassifier.fit.jsonl").splitlines()[-1]
    assert json.loads(last)["exception"].startswith("ValueError: ")


def test_hardware_metrics_per_fit_with_steps(make_tracker, read_run):
    tracker = make_tracker()
    for _ in range(2):
        DecisionTreeClassifier().fit(X, y)
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    # issue 11: in MLflow's system metrics namespace
    for suffix in ("seconds", "cpu_seconds", "cpu_percent", "rss_mb", "rss_delta_mb", "ram_percent", "disk_percent"):
        assert [step for step, _ in run.metric_history(f"system/DecisionTreeClassifier.fit.{suffix}")] == [0, 1], suffix
    assert run.metrics["system/DecisionTreeClassifier.fit.rss_mb"] > 10


def test_custom_logger_sees_the_call(make_tracker):
    seen = {}

    class Spy(Logger):
        defaults = {"label": "none"}

        def pre(self, call, options):
            return call.number

        def post(self, call, before, options):
            seen.update(name=call.name, before=before, label=options["label"], depth=call.depth,
                        result_is_instance=call.result is call.instance, duration=call.duration,
                        args=len(call.args), kwargs=sorted(call.kwargs))

    make_tracker(logging_fns={"spy": Spy(label="ctor")}, config={"events": {"spy": {"on": ["pypads_fit"], "with": {"label": "event"}}}})
    DecisionTreeClassifier().fit(X, y=y)
    assert seen["name"] == "DecisionTreeClassifier.fit" and seen["before"] == 1 and seen["label"] == "event"
    assert seen["depth"] == 0 and seen["result_is_instance"] and seen["duration"] > 0
    assert seen["args"] == 2 and seen["kwargs"] == ["y"]  # (self, X) positional, y by keyword


def test_serialize_text_and_unpicklable():
    origin = lambda: provenance("Test")  # noqa: E731
    assert serialize(np.arange(3), WriteFormats.text, 1000, origin) == ("txt", b"[0, 1, 2]")
    # every digit of a float64, where np.array2string rounds to 8
    assert serialize(np.array([[1 / 3, 2.0]]), WriteFormats.text, 1000, origin) == ("txt", b"[[0.3333333333333333, 2.0]]")
    assert serialize(np.zeros((1, 1, 2)), WriteFormats.text, 1000, origin) == ("txt", b"[[[0. 0.]]]")
    extension, content = serialize(lambda: 1, WriteFormats.text, 1000, origin)
    assert extension == "txt" and b"lambda" in content


class CountingClient:
    """A real MlflowClient that counts the calls the writer makes (observation, not a mock)."""

    def __init__(self, uri):
        self.client = MlflowClient(uri)
        self.calls = []

    def __getattr__(self, name):
        attribute = getattr(self.client, name)
        self.calls.append(name)
        return attribute


def test_writer_batches_within_mlflow_limits(store_uri, tmp_path):
    counting = CountingClient(store_uri)
    experiment = counting.client.create_experiment("batching")
    run_id = counting.client.create_run(experiment).info.run_id
    writer = writer_for(counting, run_id, store_uri, tmp_path)  # only the explicit flush writes
    writer.log_params({f"p{i}": str(i) for i in range(250)})
    for step in range(2500):
        writer.log_metric("loss", 1.0 / (step + 1), step=step)
    writer.log_bytes("a/b.txt", b"hello")
    writer.set_tag("t", "v")
    writer.close()
    assert counting.calls.count("log_batch") == 3  # 2,500 metrics + 250 params + 1 tag in 3 batches
    assert counting.calls.count("log_artifacts") == 1
    run = counting.client.get_run(run_id)
    assert len(run.data.params) == 250 and run.data.tags["t"] == "v"
    assert len(counting.client.get_metric_history(run_id, "loss")) == 2500


def test_a_name_mlflow_refuses_costs_only_that_value(store_uri, tmp_path):
    client = MlflowClient(store_uri)
    run_id = client.create_run(client.create_experiment("names")).info.run_id
    writer = writer_for(client, run_id, store_uri, tmp_path)
    writer.log_params({"depth": "3"})
    for step in range(300):
        writer.log_metric("loss", 1.0 / (step + 1), step=step)
    writer.log_metric("acc(val)", 0.9)  # parentheses: MLflow refuses the name
    writer.set_tag("stage", "test")
    with pytest.warns(UserWarning, match=r"refused metric 'acc\(val\)'"):
        assert writer.close() is True
    run = client.get_run(run_id)
    assert run.data.params == {"depth": "3"} and run.data.tags["stage"] == "test"
    assert len(client.get_metric_history(run_id, "loss")) == 300 and "acc(val)" not in run.data.metrics


def test_writer_survives_a_refused_param(store_uri, tmp_path):
    client = MlflowClient(store_uri)
    run_id = client.create_run(client.create_experiment("refused")).info.run_id
    client.log_param(run_id, "fixed", "1")
    writer = writer_for(client, run_id, store_uri, tmp_path)
    writer.log_params({"fixed": "2", "fresh": "3"})
    writer.log_metric("m", 1.0)
    with pytest.warns(UserWarning, match="refused param 'fixed'"):
        writer.close()
    run = client.get_run(run_id)
    assert run.data.params == {"fixed": "1", "fresh": "3"} and run.data.metrics == {"m": 1.0}
