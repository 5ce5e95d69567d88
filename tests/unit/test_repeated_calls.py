"""A metric called again and again on the same objects (a training loop's score): what
the loggers keep between such calls must never hide a change."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import accuracy_score

from pypads.recording.content.lineage import Origin, lineage
from pypads.recording.loggers import Datasets, Metric, PipelineTracker
from pypads.run.context import RunContext
from unit.conftest import RecordingWriter, call_of

METRIC = {"pypads_metric"}


def test_the_same_objects_scored_again_follow_an_origin_given_meanwhile(run):
    metric = Metric()
    truth = np.array([0, 1, 2, 1, 0])
    guess = truth.copy()

    def score() -> None:
        call = call_of(run, accuracy_score, truth, guess, name="accuracy_score", hooks=METRIC)
        metric.post(call, None, metric.options)  # from this frame, which names truth

    score()
    score()
    # A tracked prediction returns this very object (an estimator handing its input back):
    # from now on the score is that model's.
    lineage(run).produced(guess, Origin("DecisionTreeClassifier", "X_test", False))
    score()
    assert run.writer.metrics == {"accuracy_score_truth": [(0, 1.0), (1, 1.0)],
                                  "DecisionTreeClassifier.accuracy_score_X_test": [(0, 1.0)]}


def test_an_array_changed_in_place_is_scored_as_it_is_now(run):
    metric = Metric()
    truth = np.array([0, 1, 2, 1, 0])
    guess = truth.copy()
    for _ in range(2):
        call = call_of(run, accuracy_score, truth, guess, name="accuracy_score", hooks=METRIC)
        metric.post(call, None, metric.options)
        guess[:2] = 2  # the same object, other content: the next score sees it
    assert run.writer.metrics == {"accuracy_score_truth": [(0, 1.0), (1, 0.6)]}


def test_other_objects_get_their_own_series(run):
    metric = Metric()
    first, second = np.array([0, 1, 1]), np.array([1, 1, 0])
    for _ in range(2):  # the last call's objects are never the next call's
        call = call_of(run, accuracy_score, first, first, name="accuracy_score", hooks=METRIC)
        metric.post(call, None, metric.options)
        call = call_of(run, accuracy_score, second, first, name="accuracy_score", hooks=METRIC)
        metric.post(call, None, metric.options)
    assert run.writer.metrics == {"accuracy_score_first": [(0, 1.0), (1, 1.0)],
                                  "accuracy_score_second": [(0, 1 / 3), (1, 1 / 3)]}


def test_runs_one_after_another_keep_their_own_graph_and_datasets():
    pipeline, datasets = PipelineTracker(), Datasets()
    truth = np.array([0, 1, 2])
    runs = [RunContext(RecordingWriter()), RunContext(RecordingWriter())]  # type: ignore[arg-type]
    for run, calls in zip(runs, (3, 1)):
        for _ in range(calls):
            call = call_of(run, accuracy_score, truth, truth, name="accuracy_score", hooks=METRIC)
            pipeline.pre(call, pipeline.options)
            pipeline.post(call, None, pipeline.options)
            datasets.post(call, None, datasets.options)
        run.ending()
    for run, calls in zip(runs, (3, 1)):
        [graph] = [content for path, content in run.writer.files.items() if path == "pipeline/graph.json"]
        assert graph.count(b'"call": "accuracy_score"') == calls
        assert [entry["kind"] for entry in run.writer.entries] == ["dataset"]  # logged in each run, once
