"""Signals against tracked programs, in real subprocesses: SIGTERM ends a tracked program
as fast as an untracked one, with the same exit status, in native code too; forked
workers inherit no handler of pypads; a signal handler that calls tracked code while
pypads is at work never waits for pypads' own locks."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
from conftest import ended_run, run_script, script_environment, store_of
from mlflow.tracking import MlflowClient

pytestmark = pytest.mark.usefixtures("home_with_store")

PRELUDE = """
from pypads import PyPads
tracker = PyPads(name="signals")
from sklearn import datasets, metrics
from sklearn.tree import DecisionTreeClassifier
X, y = datasets.load_iris(return_X_y=True)
model = DecisionTreeClassifier(max_depth=2).fit(X, y)
"""


def test_sigterm_during_a_long_native_call_ends_the_program_at_once(tmp_path):
    # libc's sleep() never returns to Python: a Python-level handler would only run when
    # it does, a minute later. Untracked, SIGTERM kills the process at once.
    script = tmp_path / "script.py"
    script.write_text(PRELUDE + "import ctypes\nprint('ready', flush=True)\nctypes.CDLL(None).sleep(60)\n")
    process = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, env=script_environment(tmp_path),
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout.readline().strip() == "ready"
        time.sleep(0.2)  # inside sleep() by now
        sent = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        waited = time.monotonic() - sent
    finally:
        process.kill()
    assert process.returncode == -signal.SIGTERM
    assert waited < 2, f"SIGTERM took {waited:.1f} s to end the program"
    run = ended_run(store_of(tmp_path))
    assert run.status == "KILLED"
    assert run.params["DecisionTreeClassifier.max_depth"] == "2"


def test_pypads_installs_no_sigterm_handler_that_workers_could_inherit(tmp_path):
    result = run_script(PRELUDE + "import signal\nprint(signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)\n", tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"


def test_pool_in_a_loop_finishes_as_untracked(tmp_path):
    # With a handler of pypads in the workers, Pool.terminate() signals a worker that is
    # still starting and join() waits for ever (it hung after 4 to 85 rounds).
    loop = ("import multiprocessing, time\n"
            "started = time.monotonic()\n"
            "context = multiprocessing.get_context('fork')\n"
            "for _ in range(300):\n"
            "    with context.Pool(2) as pool:\n"
            "        pool.map(abs, range(4))\n"
            "print(round(time.monotonic() - started, 2))\n")
    untracked = run_script(loop, tmp_path, timeout=300)
    tracked = run_script(PRELUDE + loop, tmp_path, timeout=300)
    assert untracked.returncode == 0 and tracked.returncode == 0, tracked.stderr
    print(f"300 rounds of Pool(2): untracked {untracked.stdout.strip()} s, tracked {tracked.stdout.strip()} s")


def test_a_signal_handler_that_calls_tracked_code_never_waits_for_pypads(tmp_path):
    # A timer signal every millisecond lands, again and again, inside pypads' own work
    # (the journal's lock, the pipeline's, the console capture's) on the main thread.
    # The handler does not nest: on a loaded host one scoring call can outlast the 1 ms
    # period, and a handler that re-enters itself recurses until Python gives up, tracked
    # or not (it did, once, on CI under Python 3.13).
    code = PRELUDE + (
        "import signal, time\n"
        "handled = []\n"
        "inside = []\n"
        "def on_alarm(signum, frame):\n"
        "    if inside:\n"
        "        return\n"
        "    inside.append(True)\n"
        "    handled.append(metrics.accuracy_score(y, y))\n"
        "    print('tick', end='\\r')\n"
        "    inside.clear()\n"
        "signal.signal(signal.SIGALRM, on_alarm)\n"
        "signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)\n"
        "until = time.monotonic() + 3\n"
        "while time.monotonic() < until:\n"
        "    metrics.accuracy_score(y, model.predict(X))\n"
        "signal.setitimer(signal.ITIMER_REAL, 0)\n"
        "print('handled', len(handled) > 100, flush=True)\n"
    )
    result = run_script(code, tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "handled True" in result.stdout


# The stress test forks its scripts from one process that has imported everything once:
# 200 fresh interpreters would spend minutes importing scikit-learn and MLflow.
STRESS = """
import json, os, random, signal, sys, time
import mlflow  # the uploader is then a thread of each child, which needs nothing started
from sklearn import datasets, metrics
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier
import pypads
from pypads import PyPads

X, y = datasets.load_iris(return_X_y=True)
random.seed(int(sys.argv[2]))
results = []
for number in range(int(sys.argv[1])):
    child = os.fork()
    if child == 0:
        tracker = PyPads(name="stress")
        while True:
            model = DecisionTreeClassifier(max_depth=3).fit(X, y)
            metrics.accuracy_score(y, model.predict(X))
            metrics.f1_score(y, model.predict(X), average="macro")
            LogisticRegression(max_iter=20).fit(X, y).score(X, y)
    time.sleep(random.uniform(0.0, 0.8))  # into PyPads() itself, or the busy loop
    sent = time.monotonic()
    os.kill(child, signal.SIGTERM)
    deadline = sent + 10
    while time.monotonic() < deadline:
        pid, status = os.waitpid(child, os.WNOHANG)
        if pid:
            break
        time.sleep(0.005)
    else:
        os.kill(child, signal.SIGKILL)
        pid, status = os.waitpid(child, 0)
        results.append({"hung": True})
        continue
    results.append({"hung": False, "seconds": time.monotonic() - sent,
                    "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None})
print(json.dumps(results))
"""


def test_stress_200_sigterms_at_random_moments_each_end_the_program_at_once(tmp_path):
    script = tmp_path / "stress.py"
    script.write_text(STRESS)
    env = {**script_environment(tmp_path), "PYPADS_STRICT": "0", "MLFLOW_TRACKING_URI": store_of(tmp_path)}
    runs = []
    for seed in (1, 2):  # two at a time: the machine has two cores
        runs.append(subprocess.Popen([sys.executable, str(script), "100", str(seed)], cwd=tmp_path, env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True))
    results = []
    for process in runs:
        out, _ = process.communicate(timeout=900)
        assert process.returncode == 0
        results += json.loads(out.strip().splitlines()[-1])
    assert len(results) == 200
    assert not [result for result in results if result["hung"]]
    assert {result["signal"] for result in results} == {signal.SIGTERM}
    slowest = max(result["seconds"] for result in results)
    assert slowest < 2, f"the slowest SIGTERM took {slowest:.2f} s"

    # Each child's run was left in its journal (a thread uploader dies with its
    # process); recovering them ends every one KILLED, none stays RUNNING.
    recovered = run_script("from pypads.to_mlflow.uploader import recover\nprint(len(recover()))\n", tmp_path,
                           env={"MLFLOW_TRACKING_URI": store_of(tmp_path)}, timeout=600)
    assert recovered.returncode == 0, recovered.stderr
    client = MlflowClient(store_of(tmp_path))
    experiment = client.get_experiment_by_name("stress")
    runs_found = client.search_runs([experiment.experiment_id], max_results=1000)
    assert runs_found and {run.info.status for run in runs_found} == {"KILLED"}
    assert not list((tmp_path / "home" / "journal").iterdir())
