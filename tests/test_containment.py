"""pypads' trouble stays pypads': whatever the user's warning filters, disk, classes,
worker processes or tracking server, their program runs as it would untracked. Each
test runs a real script in a subprocess."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ended_run, script_environment, store_of
from mlflow.tracking import MlflowClient

pytestmark = pytest.mark.usefixtures("home_with_store")

FAILING_LOGGER = """
from pypads import Logger, PyPads

class Broken(Logger):
    name = "Broken"
    def pre(self, call, options):
        raise RuntimeError("the logger is broken")

tracker = PyPads(name="contained", logging_fns={"parameters": Broken()})
from sklearn import datasets
from sklearn.tree import DecisionTreeClassifier
X, y = datasets.load_iris(return_X_y=True)
model = DecisionTreeClassifier(max_depth=2).fit(X, y)
print("fitted", model.get_depth(), flush=True)
"""


def python(tmp_path: Path, code: str, *flags: str, env: dict[str, str] | None = None,
           timeout: float = 120) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(code)
    return subprocess.run([sys.executable, *flags, str(script)], cwd=tmp_path, capture_output=True, text=True,
                          env={**script_environment(tmp_path), "PYPADS_STRICT": "0", **(env or {})}, timeout=timeout)


@pytest.mark.parametrize("flags", [("-W", "error"), ("-W", "error::UserWarning")])
def test_a_failing_logger_never_reaches_user_code_when_warnings_are_errors(tmp_path, flags):
    result = python(tmp_path, FAILING_LOGGER, *flags)
    assert result.returncode == 0, result.stderr
    assert "fitted 2" in result.stdout
    assert "the logger is broken" in result.stderr  # said once, on stderr instead
    assert ended_run(store_of(tmp_path)).tags["pypads.failure.Broken"].startswith("pre of DecisionTreeClassifier.fit")


def test_a_failing_logger_never_reaches_user_code_under_simplefilter_error(tmp_path):
    code = "import warnings\nwarnings.simplefilter('error')\n" + FAILING_LOGGER
    result = python(tmp_path, code)
    assert result.returncode == 0, result.stderr
    assert "fitted 2" in result.stdout


def test_an_unreadable_journal_left_behind_is_one_message_when_warnings_are_errors(tmp_path):
    damaged = tmp_path / "home" / "journal" / "0123456789abcdef.1"
    damaged.mkdir(parents=True)
    (damaged / "meta.json").write_text("{ not json")
    result = python(tmp_path, FAILING_LOGGER.replace('logging_fns={"parameters": Broken()}', ""), "-W", "error")
    assert result.returncode == 0, result.stderr
    assert "fitted 2" in result.stdout
    assert f"unreadable journal {damaged} left as it is" in result.stderr
    assert (damaged / "meta.json").read_text() == "{ not json"  # nothing lost: left for the user to look into


def _mount_small_filesystem(folder: Path, size: str) -> bool:
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                             capture_output=True)
    return mounted.returncode == 0


def test_a_full_disk_stops_tracking_with_one_message_and_never_makes_a_second_run(tmp_path):
    home = tmp_path / "small"
    if not _mount_small_filesystem(home, "2m"):
        pytest.skip("this machine does not let the tests mount a small tmpfs (needs root)")
    try:
        code = (
            "from pypads import PyPads\n"
            "tracker = PyPads(name='full', config={'events': {'input': {'on': ['pypads_fit'],"
            " 'with': {'write_format': 'pickle', 'max_bytes': 10_000_000}}}})\n"
            "import numpy as np\n"
            "from sklearn.linear_model import Ridge\n"
            "rng = np.random.default_rng(0)\n"
            "scores = []\n"
            "for round in range(12):\n"
            "    X = rng.normal(size=(2000, 40)); y = X @ np.arange(40.0)\n"
            "    scores.append(Ridge().fit(X, y).score(X, y))\n"
            "print('rounds', len(scores), min(scores) > 0.99, flush=True)\n"
        )
        env = {"PYPADS_HOME": str(home), "MLFLOW_TRACKING_URI": store_of(tmp_path)}
        result = python(tmp_path, code, env=env)
        assert result.returncode == 0, result.stderr
        assert "rounds 12 True" in result.stdout
        assert result.stderr.count("cannot write to its journal") == 1
        assert "Traceback" not in result.stderr
        # The run ends once, with what reached the journal; nothing is left to recover.
        run = ended_run(store_of(tmp_path))
        assert run.status == "FINISHED"
        later = python(tmp_path, "from pypads import PyPads\nPyPads(name='later').end_run()\n", env=env)
        assert later.returncode == 0, later.stderr
        client = MlflowClient(store_of(tmp_path))
        full = client.get_experiment_by_name("full")
        assert len(client.search_runs([full.experiment_id])) == 1
    finally:
        subprocess.run(["umount", "-l", str(home)], capture_output=True)


USER_CLASS = """
import cloudpickle
from pypads import PyPads
tracker = PyPads(name="pickling")
from sklearn import datasets
from sklearn.model_selection import GridSearchCV
from sklearn.tree import DecisionTreeClassifier

class MyTree(DecisionTreeClassifier):
    def fit(self, X, y, sample_weight=None, check_input=True):
        self.seen_ = len(X)
        return super().fit(X, y, sample_weight=sample_weight, check_input=check_input)

X, y = datasets.load_iris(return_X_y=True)
if __name__ == "__main__":
    search = GridSearchCV(MyTree(), {"max_depth": [1, 2, 3]}, cv=3, n_jobs=2).fit(X, y)
    print("best", search.best_params_["max_depth"], flush=True)
    with open("tree.pickle", "wb") as stream:
        cloudpickle.dump(MyTree(max_depth=2), stream)
"""

# Loads the pickle where pypads cannot be imported at all.
LOAD_WITHOUT_PYPADS = """
import sys
sys.modules["pypads"] = None  # import pypads now fails, as where it is not installed
import pickle
from sklearn import datasets
X, y = datasets.load_iris(return_X_y=True)
with open("tree.pickle", "rb") as stream:
    tree = pickle.load(stream)
print("loaded", tree.fit(X, y).seen_, tree.get_depth(), flush=True)
"""


def test_a_users_estimator_class_pickles_by_value_and_loads_without_pypads(tmp_path):
    result = python(tmp_path, USER_CLASS, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "best" in result.stdout
    loaded = python(tmp_path, LOAD_WITHOUT_PYPADS)
    assert loaded.returncode == 0, loaded.stderr
    assert "loaded 150 2" in loaded.stdout


WORKERS = """
from pypads import PyPads
tracker = PyPads(name="workers")
import concurrent.futures, multiprocessing
from joblib import Parallel, delayed

def square(x):
    return x * x

if __name__ == "__main__":
    for method in ("spawn", "forkserver", "fork"):
        with multiprocessing.get_context(method).Pool(2) as pool:
            assert pool.map(square, range(4)) == [0, 1, 4, 9]
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as executor:
        assert list(executor.map(square, range(4))) == [0, 1, 4, 9]
    assert Parallel(n_jobs=2)(delayed(square)(x) for x in range(4)) == [0, 1, 4, 9]
    print("done", flush=True)
"""


def test_worker_processes_never_open_runs_of_their_own(tmp_path):
    result = python(tmp_path, WORKERS, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "done" in result.stdout
    assert result.stderr == ""  # nothing of pypads' or its uploader's: neither workers nor a new store
    time.sleep(1)  # a stray run would be opened by its worker's uploader by now
    client = MlflowClient(store_of(tmp_path))
    runs = [run for experiment in client.search_experiments() for run in client.search_runs([experiment.experiment_id])]
    assert len(runs) == 1, [run.info.status for run in runs]


DEAD_SERVER = {"MLFLOW_TRACKING_URI": "http://127.0.0.1:9"}  # nothing listens on the discard port


def test_run_id_and_importing_mlflow_are_bounded_against_a_dead_server(tmp_path):
    code = (
        "import time\n"
        "from pypads import PyPads\n"
        "tracker = PyPads(name='dead', config={'flush_timeout': 2})\n"
        "started = time.monotonic()\n"
        "print('run id', tracker.run_id, flush=True)\n"
        "print('waited', round(time.monotonic() - started, 1), flush=True)\n"
        "started = time.monotonic()\n"
        "import mlflow\n"
        "print('imported', round(time.monotonic() - started, 1), flush=True)\n"
    )
    started = time.monotonic()
    result = python(tmp_path, code, env=DEAD_SERVER, timeout=120)
    took = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert "run id None" in result.stdout
    waited = float(result.stdout.split("waited ")[1].split()[0])
    # The bound: the uploader's start-up and the call that opens the run, each at most
    # flush_timeout (2 s); MLflow's own retries would take about four minutes.
    assert waited <= 2 * 2 + 3, result.stdout
    assert took < 60, f"the script took {took:.0f} s"


def test_an_orphaned_uploader_lets_go_of_the_scripts_output_at_once(tmp_path):
    # A caller capturing the script's output waits until every holder of the pipes has
    # closed them: the uploader must not keep them while it finishes on its own.
    code = "from pypads import PyPads\ntracker = PyPads(name='orphan')\nimport os\nos._exit(0)\n"
    started = time.monotonic()
    result = python(tmp_path, code, env=DEAD_SERVER, timeout=120)
    took = time.monotonic() - started
    assert result.returncode == 0
    assert took < 20, f"the caller waited {took:.0f} s for the script's output to close"
