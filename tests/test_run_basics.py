"""What a run says about itself in MLflow's UI: when it started, and in which view its
experiment opens. Scripts run in their own interpreter; runs are read back through MlflowClient."""

from __future__ import annotations

import time

from conftest import only_run, run_script, store_of
from mlflow.tracking import MlflowClient

SCRIPT = """
import time
before = time.time()
from pypads import PyPads
tracker = PyPads(name="basics")
print(before, time.time(), flush=True)
from sklearn import datasets
from sklearn.tree import DecisionTreeClassifier
X, y = datasets.load_iris(return_X_y=True)
DecisionTreeClassifier().fit(X, y)
"""


def test_the_run_starts_when_pypads_ran_not_when_its_uploader_opened_it(tmp_path):
    # A new store: its uploader spends seconds importing MLflow and creating tables first.
    result = run_script(SCRIPT, tmp_path)
    assert result.returncode == 0, result.stderr
    before, after = map(float, result.stdout.split())
    run = only_run(store_of(tmp_path)).run
    started = run.info.start_time / 1000
    assert before - 0.5 <= started <= after + 0.5, (before, started, after)
    assert run.info.end_time - run.info.start_time >= 0


def test_the_run_starts_when_pypads_ran_also_when_the_script_uses_mlflow(make_tracker, read_run):
    before = time.time()
    tracker = make_tracker()  # MLflow is imported here: the run is opened in PyPads() itself
    after = time.time()
    run_id = tracker.run_id
    tracker.end_run()
    started = read_run(run_id).run.info.start_time / 1000
    assert before - 0.5 <= started <= after + 0.5, (before, started, after)


def test_a_new_experiment_opens_in_the_model_training_view_and_the_users_own_is_left_alone(tmp_path):
    assert run_script(SCRIPT, tmp_path).returncode == 0
    client = MlflowClient(store_of(tmp_path))
    assert client.get_experiment_by_name("basics").tags["mlflow.experimentKind"] == "custom_model_development"

    client.create_experiment("mine", tags={"team": "a"})
    result = run_script(SCRIPT.replace('name="basics"', 'name="mine"'), tmp_path)
    assert result.returncode == 0, result.stderr
    assert client.get_experiment_by_name("mine").tags == {"team": "a"}
