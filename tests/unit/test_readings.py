"""A mapping file's ``reading`` (pypads.core.mapping and pypads.recording.content.call_values):
what the schema admits is what is parsed, a bad reading names its place, and the values
read of a call become the curves, numbers and tables a user would read."""

from __future__ import annotations

import copy
import csv
import io

import lightgbm
import numpy as np
import pandas as pd
import pytest
import xgboost

from pypads.core import Call, MappingError
from pypads.core.mapping import parse_mapping
from pypads.core.mapping.reading import parse_source
from pypads.recording.content.call_values import csv_table, curves_of, read, scalars_of, thinned
from pypads.recording.loggers.readings import Guarded, params_of_call


def mapping(reading: dict) -> dict:
    return {"metadata": {"library": "xgboost", "distribution": ["xgboost", "xgboost-cpu"], "library_versions": ">=3",
                         "mapping_version": "1.0.0"},
            "algorithms": [{"name": "training", "implementation": {"xgboost": "xgboost.training"},
                            "hooks": {"pypads_fit": ["train"]}, "reading": {"train": reading}}]}


def test_a_reading_is_parsed_as_the_schema_admits_it():
    file = parse_mapping(mapping({
        "params": ["params", "instance._get_init_kwds()", "arguments"],
        "model": "result", "flavour": "xgboost",
        "curves": ["recorded", "instance.evals_result()"],
        "scalars": ["result.best_iteration", {"source": "instance.best_iteration_", "name": "best_iteration", "absent_if": 0}],
        "tables": {"importance": {"gain": "result.get_score(importance_type='gain', fmap='')"}},
        "texts": {"summary": "result.summary()"},
        "record": {"argument": "callbacks", "append": "xgboost.callback.record"},
    }))
    assert file.distributions == ("xgboost", "xgboost-cpu") and file.distribution == "xgboost"
    reading = file.entries[0].reading_for("train")
    assert reading is not None and file.entries[0].reading_for("cv") is None
    params, init, everything = reading.params
    assert (params.root, params.argument, params.name) == ("arguments", "params", "params")
    assert (init.root, init.steps[0].attribute, init.steps[0].called) == ("instance", "_get_init_kwds", True)
    assert (everything.root, everything.argument) == ("arguments", None)
    assert [scalar.name for scalar in reading.scalars] == ["best_iteration", "best_iteration"]
    assert reading.scalars[1].absent_if == 0.0 and reading.scalars[0].absent_if is None
    step = reading.tables[0][1][0][1].steps[0]
    assert (step.attribute, step.called, step.keywords) == ("get_score", True, (("importance_type", "gain"), ("fmap", "")))
    assert reading.record is not None and reading.record.append == "xgboost.callback.record"


@pytest.mark.parametrize(("reading", "where"), [
    ({"curves": ["result.evals_result(x=1)"]}, "$.algorithms[0].reading.train.curves[0]"),  # only words as values
    ({"curves": ["__import__('os')"]}, "$.algorithms[0].reading.train.curves[0]"),
    ({"model": "output"}, "$.algorithms[0].reading.train.model"),
    ({"record": {"argument": "callbacks", "append": "os.system"}}, "$.algorithms[0].reading.train.record.append"),
    ({"colour": "red"}, "$.algorithms[0].reading.train"),
    # A mapping file reaches only what it names of the call's own objects, and writes only
    # inside the run: no dunders, no calls on the caller's arguments, no path in a name.
    ({"curves": ["result.__init__"]}, "$.algorithms[0].reading.train.curves[0]"),
    ({"scalars": ["result.__class__.__init__.__globals__"]}, "$.algorithms[0].reading.train.scalars[0]"),
    ({"params": ["recorded.clear()"]}, "$.algorithms[0].reading.train.params[0]"),
    ({"charts": {"importance": "gain"}}, "$.algorithms[0].reading.train.charts.importance"),  # no such table
    ({"tables": {"importance": {"gain": "result.gain"}}, "charts": {"importance": "cover"}},
     "$.algorithms[0].reading.train.charts.importance"),  # no such column
    ({"charts": {"../x": "gain"}}, "$.algorithms[0].reading.train.charts"),
    ({"data": {"targets": "arguments.dtrain.get_label()"}}, "$.algorithms[0].reading.train.data"),
    ({"texts": {"../../escaped": "result.summary()"}}, "$.algorithms[0].reading.train.texts"),
    ({"tables": {"a/b": {"x": "result.x"}}}, "$.algorithms[0].reading.train.tables"),
])
def test_a_bad_reading_is_refused_naming_its_place(reading, where):
    with pytest.raises(MappingError) as raised:
        parse_mapping(mapping(reading))
    assert where in str(raised.value)


def test_curves_are_every_sequence_of_numbers_named_by_their_keys():
    evals = {"train": {"logloss": [0.6, 0.4, 0.3]}, "test": {"logloss": [0.7, 0.5, 0.45], "auc": np.array([0.8, 0.9, 0.91])}}
    assert curves_of(evals) == {"train.logloss": [0.6, 0.4, 0.3], "test.logloss": [0.7, 0.5, 0.45],
                                "test.auc": [0.8, 0.9, 0.91]}
    frame = pd.DataFrame({"test-auc-mean": [0.9, 0.95], "test-auc-std": [0.01, 0.02]})
    assert curves_of(frame) == {"test-auc-mean": [0.9, 0.95], "test-auc-std": [0.01, 0.02]}
    # Not curves: text, pairs, a booster; and None (nothing was recorded).
    assert curves_of({"name": "x", "pairs": [(1, 2)], "cvbooster": object()}) == {} and curves_of(None) == {}


def test_single_values_and_a_long_curve_thinned_with_its_last_step():
    assert scalars_of("best_iteration", 41) == {"best_iteration": 41.0}
    assert scalars_of("best_score", {"valid": {"l2": 3.5}}) == {"best_score.valid.l2": 3.5}
    assert scalars_of("flag", True) == {} and scalars_of("text", "3") == {}
    steps = thinned(list(range(25_001)), 10_000)
    assert steps[0] == (0, 0) and steps[-1] == (25_000, 25_000) and len(steps) <= 10_001
    assert thinned([1.0, 2.0], 10) == [(0, 1.0), (1, 2.0)]


def test_a_table_aligns_mappings_by_key_and_names_rows_by_an_index():
    gain = {"f0": 1.5, "f3": 2.0}
    weight = {"f3": 7, "f1": 2}
    rows = list(csv.reader(io.StringIO(csv_table([("gain", gain), ("weight", weight)]))))
    assert rows == [["", "gain", "weight"], ["f0", "1.5", ""], ["f3", "2.0", "7"], ["f1", "", "2"]]
    coef = pd.Series([1.0, 2.0], index=["Intercept", "x"])
    interval = pd.DataFrame([[0.5, 1.5], [1.0, 3.0]], index=["Intercept", "x"])
    rows = list(csv.reader(io.StringIO(csv_table([("coef", coef), ("conf_int", interval)]))))
    assert rows == [["", "coef", "conf_int_0", "conf_int_1"], ["Intercept", "1.0", "0.5", "1.5"], ["x", "2.0", "1.0", "3.0"]]
    assert csv_table([("a", [1, 2]), ("b", [1, 2, 3])]) is None and csv_table([("a", None)]) is None


def a_call_of_xgboost_train(params: dict, dtrain: xgboost.DMatrix) -> Call:
    return Call(xgboost.train, "train", None, None, (params, dtrain), {}, frozenset({"pypads_fit"}), None, 0, 0, 0, None)


def test_a_source_calls_only_functions_the_called_library_defines():
    params = {"max_depth": 3}
    dtrain = xgboost.DMatrix(np.array([[1.0, 0.0], [0.0, 2.0]]), label=np.array([0.0, 1.0]))
    call = a_call_of_xgboost_train(params, dtrain)
    np.testing.assert_array_equal(read(parse_source("arguments.dtrain.get_label()"), call, None), [0.0, 1.0])
    assert read(parse_source("arguments.dtrain.get_data()"), call, None).shape == (2, 2)
    # A dict's own method is no function of XGBoost's: not called, the value not found.
    assert read(parse_source("arguments.params.clear()"), call, None, "missing") == "missing"
    assert params == {"max_depth": 3}


def test_charts_and_data_are_parsed():
    reading = parse_mapping(mapping({
        "tables": {"importance": {"gain": "result.get_score(importance_type='gain')"}},
        "charts": {"importance": "gain"},
        "data": {"features": "arguments.dtrain.get_data()", "targets": "arguments.dtrain.get_label()"},
    })).entries[0].reading_for("train")
    assert reading is not None and reading.charts == (("importance", "gain"),)
    (data,) = reading.data
    assert data.features.argument == "dtrain" and data.targets is not None and data.targets.steps[0].attribute == "get_label"
    lightgbm = parse_mapping(mapping({"evals": {"sets": "arguments.valid_sets", "names": "arguments.valid_names"}}))
    evals = lightgbm.entries[0].reading_for("train").evals  # type: ignore[union-attr]
    assert evals is not None and evals.sets.argument == "valid_sets" and evals.names is not None
    alternatives = parse_mapping(mapping({"data": [{"features": "instance.data.orig_exog", "targets": "instance.data.orig_endog"},
                                                   {"features": "instance.data.orig_endog"}]})).entries[0].reading_for("train")
    assert alternatives is not None and [item.targets is None for item in alternatives.data] == [False, True]


def test_params_given_as_pairs_are_items_and_a_key_given_twice_a_list():
    pairs = [("max_depth", 2), ("eval_metric", "logloss"), ("eval_metric", "error")]
    call = a_call_of_xgboost_train(pairs, xgboost.DMatrix(np.zeros((2, 2)), label=np.zeros(2)))
    reading = parse_mapping(mapping({"params": ["params"]})).entries[0].reading_for("train")
    assert reading is not None
    assert params_of_call(call, reading) == {"max_depth": "2", "eval_metric": "['logloss', 'error']"}


def test_a_guarded_recorder_is_the_recorder_to_the_library_and_copies():
    recorded: dict = {}
    guarded = Guarded(lightgbm.record_evaluation(recorded), recorded)
    assert guarded.order == 20 and guarded.before_iteration is False  # what LightGBM sorts callbacks by
    assert copy.deepcopy(guarded).order == 20 and copy.copy(guarded).order == 20
    guarded(None)  # LightGBM's recorder fails on what is no CallbackEnv: the training never sees it
    assert recorded == {} and guarded(None) is None
