"""The seed README's usage example, verbatim, logs what the seed says it logs."""

from __future__ import annotations

import shutil

from conftest import only_run, run_script

SEED_EXAMPLE = '''
from pypads.base import PyPads
# define the configuration, in this case we want to track the parameters,
# outputs and the inputs of each called function included in the hooks (pypads_fit, pypads_predict)
config = {"events": {
    "parameters": {"on": ["pypads_fit"]},
    "output": {"on": ["pypads_fit", "pypads_predict"]},
    "input": {"on": ["pypads_fit"]}
}}
# A simple initialization of the class will activate the tracking
PyPads(config=config)

# An example
from sklearn import datasets, metrics
from sklearn.tree import DecisionTreeClassifier

# load the iris datasets
dataset = datasets.load_iris()

# fit a model to the data
model = DecisionTreeClassifier()
model.fit(dataset.data, dataset.target) # pypads will track the parameters, output, and input of the model fit function.
# get the predictions
predicted = model.predict(dataset.data) # pypads will track only the output of the model predict function.
'''


def test_seed_usage_example_verbatim(tmp_path, empty_store):
    (tmp_path / "home").mkdir()
    shutil.copyfile(empty_store, tmp_path / "home" / "mlflow.db")
    result = run_script(SEED_EXAMPLE, tmp_path)
    assert result.returncode == 0, result.stderr
    run = only_run(f"sqlite:///{tmp_path / 'home' / 'mlflow.db'}")
    assert run.status == "FINISHED"
    assert run.client.get_experiment(run.run.info.experiment_id).name == "script"  # the script's name
    assert run.params["DecisionTreeClassifier.criterion"] == "gini"
    assert run.metrics == {}  # neither metric nor hardware events are in this config
    assert sorted(run.artifacts("calls")) == [
        "calls/DecisionTreeClassifier.fit.jsonl",
        "calls/DecisionTreeClassifier.predict.jsonl",
    ]
    last = run.artifact_text("calls/DecisionTreeClassifier.fit.jsonl").splitlines()[-1]
    assert '"output": "DecisionTreeClassifier()"' in last


def test_seed_default_config_shape():
    from pypads.base import DEFAULT_CONFIG, DEFAULT_LOGGING_FNS, WriteFormats

    seed_events = {"init", "parameters", "hardware", "output", "input", "metric", "pipeline", "log"}
    # The seed's events, plus what a run tells beyond calls (issue 11): the model, the
    # data, a search's result, cross-validation scores, the comparison of models and their training scores;
    # and what a mapping file's reading names of a call (issue 23).
    assert set(DEFAULT_CONFIG["events"]) == seed_events | {"model", "datasets", "search", "crossval", "comparison",
                                                           "training", "readings"}
    assert DEFAULT_CONFIG["events"]["input"]["with"] == {"_pypads_write_format": WriteFormats.text.name}
    assert (DEFAULT_CONFIG["recursion_identity"], DEFAULT_CONFIG["recursion_depth"], DEFAULT_CONFIG["log_on_failure"]) == (False, -1, True)
    assert {type(logger).__name__ for logger in DEFAULT_LOGGING_FNS["hardware"]} == {"Cpu", "Ram", "Disk"}
