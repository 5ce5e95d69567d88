"""How runs end, each in a real subprocess: normal exit, an exception, SIGTERM, Ctrl-C."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import RunView, ended_run, only_run, run_script, script_environment, store_of

pytestmark = pytest.mark.usefixtures("home_with_store")

PRELUDE = """
from pypads.base import PyPads
tracker = PyPads(name="lifecycle")
from sklearn import datasets
from sklearn.tree import DecisionTreeClassifier
X, y = datasets.load_iris(return_X_y=True)
DecisionTreeClassifier(max_depth=2).fit(X, y)
"""


def test_importing_pypads_imports_neither_mlflow_nor_matplotlib_nor_git(tmp_path):
    # nor loguru (imported at pypads' first message) nor multiprocessing (a worker has it
    # already): each cost a script's start-up tens of milliseconds
    unwanted = "{'mlflow', 'matplotlib', 'git', 'loguru', 'multiprocessing'}"
    code = f"import sys\nimport pypads\nprint(sorted({unwanted} & set(sys.modules)))\n"
    result = run_script(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_a_second_script_without_config_never_imports_jsonschema(tmp_path):
    # 50-100 ms of each start-up: the shipped mapping file passed the schema at the first
    # PyPads(), and pypads' default config is valid as it ships
    code = ("import sys\nfrom pypads import PyPads\nPyPads(name='lifecycle')\n"
            "print(sorted({'jsonschema', 'referencing'} & set(sys.modules)))\n")
    first, second = run_script(code, tmp_path), run_script(code, tmp_path)
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert first.stdout.strip() == "['jsonschema', 'referencing']"
    assert second.stdout.strip() == "[]"


def test_a_script_that_does_not_use_mlflow_never_loads_it_and_its_run_is_complete(tmp_path):
    # MLflow (a second to import, 170 MB) runs in the uploader's process, not the script's;
    # the pipeline's picture is drawn without matplotlib (half a second, 30 MB).
    code = PRELUDE + (
        "from sklearn import metrics\n"
        "model = DecisionTreeClassifier(max_depth=3).fit(X, y)\n"
        "metrics.accuracy_score(y, model.predict(X))\n"
        "run_id = tracker.run_id\n"
        "tracker.end_run()\n"
        "import sys\n"
        "print(run_id, sorted(name for name in sys.modules if name.split('.')[0] in ('mlflow', 'sqlalchemy', 'matplotlib')))\n"
    )
    result = run_script(code, tmp_path)
    assert result.returncode == 0, result.stderr
    run = only_run(store_of(tmp_path))
    assert result.stdout.split() == [run.run_id, "[]"]
    assert run.status == "FINISHED"
    assert run.params["DecisionTreeClassifier_1.max_depth"] == "3"
    assert "DecisionTreeClassifier_1.accuracy_score_X" in run.metrics
    assert run.tags["mlflow.source.name"].endswith("script.py")
    assert list((tmp_path / "home" / "journal").iterdir()) == []


FIND_UPLOADER = ("import psutil\n(uploader,) = [child for child in psutil.Process().children() "
                 "if 'pypads.to_mlflow.uploader' in ' '.join(child.cmdline())]\n")


def complete_run_despite_the_uploaders_death(result: subprocess.CompletedProcess[str], tmp_path: Path) -> RunView:
    assert result.returncode == 0, result.stderr
    assert list((tmp_path / "home" / "journal").iterdir()) == []
    run = only_run(store_of(tmp_path))
    assert result.stdout.strip() == run.run_id and run.status == "FINISHED"
    assert run.params["DecisionTreeClassifier.max_depth"] == "2"  # logged before the uploader died
    return run


def test_an_uploader_process_that_dies_costs_a_warning_and_a_thread_takes_over(tmp_path):
    code = PRELUDE + FIND_UPLOADER + (
        "uploader.kill()\n"
        "uploader.wait(30)\n"
        "DecisionTreeClassifier(max_depth=3).fit(X, y)\n"
        "print(tracker.run_id, flush=True)\n"
    )
    result = run_script(code, tmp_path)
    run = complete_run_despite_the_uploaders_death(result, tmp_path)
    assert "uploader stopped before the run ended" in result.stderr
    assert "a thread of the script uploads instead" in result.stderr
    assert run.params["DecisionTreeClassifier_1.max_depth"] == "3"  # logged after


def test_an_uploader_that_dies_as_the_script_ends_leaves_the_end_to_the_script(tmp_path):
    # Killed once the end has begun (the script notes the run's status first), too late
    # for a take-over: the end itself uploads the rest (or, killed after its last upload,
    # finds the run complete).
    code = PRELUDE + FIND_UPLOADER + (
        "import threading, time\n"
        "print(tracker.run_id, flush=True)\n"
        "status = tracker.writer.journal.folder / 'status'\n"
        "def kill_at_the_end():\n"
        "    while not status.exists():\n"
        "        time.sleep(0.001)\n"
        "    uploader.kill()\n"
        "threading.Thread(target=kill_at_the_end, daemon=True).start()\n"
    )
    complete_run_despite_the_uploaders_death(run_script(code, tmp_path), tmp_path)


def test_where_no_process_can_be_started_a_thread_uploads(tmp_path):
    code = "import sys\nsys.executable = '/nonexistent/python'\n" + PRELUDE + "print(tracker.run_id)\n"
    result = run_script(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "could not start its uploader process" in result.stderr
    run = only_run(store_of(tmp_path))
    assert result.stdout.strip() == run.run_id and run.status == "FINISHED"
    assert run.params["DecisionTreeClassifier.max_depth"] == "2"


def test_the_scripts_own_mlflow_calls_right_after_pypads_land_in_its_run(tmp_path):
    # The run is opened off the script's thread; a script that imports MLflow at once
    # and logs must still find it, not start a run of its own.
    code = (
        "from pypads import PyPads\n"
        "tracker = PyPads(name='mine')\n"
        "import mlflow\n"
        "mlflow.log_metric('own', 1.5)\n"
        "mlflow.set_tag('mine', 'yes')\n"
        "from sklearn import datasets\n"
        "from sklearn.tree import DecisionTreeClassifier\n"
        "DecisionTreeClassifier(max_depth=2).fit(*datasets.load_iris(return_X_y=True))\n"
        "print(tracker.run_id, mlflow.active_run().info.run_id)\n"
    )
    result = run_script(code, tmp_path)
    assert result.returncode == 0, result.stderr
    run = only_run(store_of(tmp_path))
    assert result.stdout.split() == [run.run_id, run.run_id]
    assert run.status == "FINISHED"
    assert run.metrics["own"] == 1.5 and run.tags["mine"] == "yes"
    assert run.params["DecisionTreeClassifier.max_depth"] == "2"
    assert run.tags["mlflow.source.name"].endswith("script.py")  # tagged as mlflow.start_run would


def test_a_script_that_ends_before_the_run_is_open_still_gets_its_run(tmp_path):
    # The uploader may still be importing MLflow when the interpreter shuts down.
    result = run_script("from pypads import PyPads\nPyPads(name='short').writer.log_metric('m', 2.0)\n", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    run = only_run(store_of(tmp_path))
    assert run.status == "FINISHED" and run.metrics["m"] == 2.0
    assert list((tmp_path / "home" / "journal").iterdir()) == []


def test_a_short_first_run_into_a_new_store_is_complete(tmp_path):
    # A new store's first use creates MLflow's tables, seconds of work: the end of a store
    # on this machine waits for that (a server that does not answer gets 5 s).
    home = tmp_path / "new-home"
    code = "from pypads import PyPads\nPyPads(name='first').writer.log_metric('m', 1.0)\n"
    result = run_script(code, tmp_path, env={"PYPADS_HOME": str(home)})
    assert result.returncode == 0, result.stderr
    assert "did not answer" not in result.stderr
    run = only_run(f"sqlite:///{home / 'mlflow.db'}")
    assert run.status == "FINISHED" and run.metrics["m"] == 1.0
    assert list((home / "journal").iterdir()) == []


def test_normal_exit_finishes_the_run_with_everything_flushed(tmp_path):
    result = run_script(PRELUDE + "print('done', tracker.run_id)\n", tmp_path)
    assert result.returncode == 0, result.stderr
    run = only_run(store_of(tmp_path))
    assert result.stdout.strip() == f"done {run.run_id}"
    assert run.status == "FINISHED"
    assert run.params["DecisionTreeClassifier.max_depth"] == "2"
    assert run.run.info.experiment_id and run.client.get_experiment(run.run.info.experiment_id).name == "lifecycle"


def test_uncaught_exception_fails_the_run_and_keeps_the_traceback(tmp_path):
    result = run_script(PRELUDE + "raise RuntimeError('boom in user code')\n", tmp_path)
    assert result.returncode == 1
    assert "RuntimeError: boom in user code" in result.stderr  # the user's traceback is still printed
    run = only_run(store_of(tmp_path))
    assert run.status == "FAILED"
    assert "RuntimeError: boom in user code" in run.artifact_text("failure/traceback.txt")
    assert run.params["DecisionTreeClassifier.max_depth"] == "2"


def test_log_on_failure_off_keeps_no_traceback(tmp_path):
    code = PRELUDE.replace('PyPads(name="lifecycle")', 'PyPads(name="lifecycle", config={"log_on_failure": False})')
    result = run_script(code + "raise RuntimeError('boom')\n", tmp_path)
    assert result.returncode == 1
    run = only_run(store_of(tmp_path))
    assert run.status == "FAILED"
    assert "failure/traceback.txt" not in run.artifacts()


@pytest.mark.parametrize(("signum", "exit_code"), [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGINT, -signal.SIGINT)])
def test_signal_kills_the_run_and_the_program_stops_as_without_pypads(tmp_path, signum, exit_code):
    script = tmp_path / "script.py"
    # Ctrl-C's disposition as in a terminal: a shell's background job starts with SIGINT
    # ignored, and Python then keeps it ignored, tracked or not (CI run with `&` did).
    restore = "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
    script.write_text(restore + PRELUDE + "print('ready', flush=True)\nimport time\nwhile True:\n    time.sleep(0.05)\n")
    env = {**script_environment(tmp_path), "PYTHONFAULTHANDLER": "1"}
    process = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "ready"
    process.send_signal(signum)
    try:
        # Reading its output meanwhile, as a terminal would: a full pipe would stop it.
        _, errors = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack
        _, errors = process.communicate()
        pytest.fail(f"the script did not stop within 60 s of the signal; its threads:\n{errors[-6000:]}")
    assert process.returncode == exit_code, errors[-3000:]  # died of the signal, like an untracked script
    run = ended_run(store_of(tmp_path))
    assert run.status == "KILLED"
    assert run.params["DecisionTreeClassifier.max_depth"] == "2"


def test_user_sigterm_handler_still_runs(tmp_path):
    code = (
        "import signal, sys\n"
        "signal.signal(signal.SIGTERM, lambda s, f: (print('user handler', flush=True), sys.exit(3)))\n"
        + PRELUDE
        + "import os\nos.kill(os.getpid(), signal.SIGTERM)\n"
    )
    result = run_script(code, tmp_path)
    assert result.returncode == 3
    assert "user handler" in result.stdout
    assert only_run(store_of(tmp_path)).status == "KILLED"


def test_joins_an_active_mlflow_run_and_leaves_it_to_its_owner(tmp_path):
    code = (
        "import mlflow\n"
        f"mlflow.set_tracking_uri('{store_of(tmp_path)}')\n"
        "mlflow.set_experiment('mine')\n"
        "with mlflow.start_run() as run:\n"
        "    mlflow.log_param('mine', 1)\n"
        "    from pypads import PyPads\n"
        "    tracker = PyPads()\n"
        "    assert tracker.run_id == run.info.run_id\n"
        "    from sklearn.tree import DecisionTreeClassifier\n"
        "    DecisionTreeClassifier(max_depth=4).fit([[0], [1]], [0, 1])\n"
        "    tracker.end_run()\n"
        "    assert mlflow.active_run().info.run_id == run.info.run_id\n"
    )
    result = run_script(code, tmp_path)
    assert result.returncode == 0, result.stderr
    run = only_run(store_of(tmp_path))
    assert run.params == {**run.params, "mine": "1", "DecisionTreeClassifier.max_depth": "4"}
    assert run.status == "FINISHED"


def test_forked_child_exit_does_not_end_the_parents_run(tmp_path):
    code = PRELUDE + (
        "import os\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    import sys; sys.exit(0)\n"
        "os.waitpid(pid, 0)\n"
        "from pypads.to_mlflow.store import resolve_store\n"
        "from mlflow.tracking import MlflowClient\n"
        "print(MlflowClient(tracker.store.tracking_uri).get_run(tracker.run_id).info.status)\n"
    )
    result = run_script(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "RUNNING"
    assert only_run(store_of(tmp_path)).status == "FINISHED"


@pytest.mark.parametrize("uploader", ["process", "thread"])
def test_sigkill_loses_nothing(tmp_path, uploader):
    """With its own process, the uploader outlives the script and ends the run itself;
    on the script's thread, it dies with it, and the next PyPads() recovers the journal."""
    code = PRELUDE.replace('PyPads(name="lifecycle")', 'PyPads(name="lifecycle", config={"events": {'
                           '"metric": {"on": ["pypads_metric"]}, "parameters": {"on": ["pypads_fit"]},'
                           f'"calls": {{"on": ["pypads_predict"]}}}}, "uploader": "{uploader}"}})') + (
        "from sklearn import metrics\n"
        "model = DecisionTreeClassifier(max_depth=3).fit(X, y)\n"
        "for i in range(200):\n"
        "    metrics.accuracy_score(y, model.predict(X))\n"
        "print(tracker.run_id, flush=True)\n"
        "import os, signal\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    killed = run_script(code, tmp_path)
    assert killed.returncode == -signal.SIGKILL
    run_id = killed.stdout.strip()
    journals = tmp_path / "home" / "journal"
    if uploader == "thread":
        left = [folder for folder in journals.iterdir() if json.loads((folder / "meta.json").read_text())["run_id"] == run_id]
        assert len(left) == 1
        later = run_script("from pypads import PyPads\nPyPads(name='later').end_run()\n", tmp_path)
        assert later.returncode == 0, later.stderr
    # The uploader finishes on its own (the script is gone, or done and not waiting for
    # other runs' journals).
    deadline = time.monotonic() + 60
    while any(journals.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert list(journals.iterdir()) == []
    from conftest import RunView

    from pypads.recording.callmonitor import load

    run = RunView(store_of(tmp_path), run_id)
    assert run.status == "KILLED"
    assert run.params["DecisionTreeClassifier_1.max_depth"] == "3"
    assert [step for step, _ in run.metric_history("accuracy_score_y")] == list(range(200))  # no pipeline event: named by its argument
    assert load(run_id, tracking_uri=store_of(tmp_path)).calls("DecisionTreeClassifier.predict") == 200
