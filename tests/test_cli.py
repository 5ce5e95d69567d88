"""The ``pypads`` command, run as a user types it: the installed console script in a
fresh process, a real MLflow SQLite store in a temporary folder, real scikit-learn."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from conftest import ended_run, only_run, script_environment, store_of

PYPADS = Path(sys.executable).with_name("pypads")
MAPPINGS = Path(__file__).resolve().parent.parent / "mappings"

pytestmark = pytest.mark.usefixtures("home_with_store")

TRAIN = textwrap.dedent("""\
    import argparse
    import sys
    from sklearn import datasets, metrics
    from sklearn.tree import DecisionTreeClassifier

    parser = argparse.ArgumentParser()
    parser.add_argument("--depth", type=int, default=3)
    options = parser.parse_args()
    X, y = datasets.load_iris(return_X_y=True)
    model = DecisionTreeClassifier(max_depth=options.depth, random_state=0).fit(X, y)
    print("accuracy", metrics.accuracy_score(y, model.predict(X)))
    print("argv", sys.argv[1:], "name", __name__, "path0", sys.path[0])
""")


def pypads(tmp_path: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``pypads ARGS`` in ``tmp_path``, its runs going to the store in ``tmp_path/home``."""
    assert PYPADS.exists(), f"{PYPADS} is missing: run `.tools/bin/poetry install` to create the console script"
    environment = {**script_environment(tmp_path), "MLFLOW_DISABLE_TELEMETRY": "true"}
    return subprocess.run([str(PYPADS), *args], cwd=tmp_path, env=environment, capture_output=True, text=True,
                          timeout=timeout)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_every_subcommand_has_help(tmp_path):
    top = pypads(tmp_path, "--help")
    assert top.returncode == 0
    for command in ["run", "ui", "runs", "calls", "mappings", "sync", "diff"]:
        assert command in top.stdout
        shown = pypads(tmp_path, command, "--help")
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.startswith(f"usage: pypads {command}")
    check = pypads(tmp_path, "mappings", "check", "--help")
    assert check.returncode == 0 and "FILE" in check.stdout


def test_building_the_command_imports_no_mlflow(tmp_path):
    # `pypads run` must start PyPads() before MLflow is imported, as a script would.
    code = "import sys; from pypads.cli import build_parser; build_parser(); print('mlflow' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "False", result.stderr


def test_run_tracks_an_unchanged_script_then_runs_and_calls_list_it(tmp_path):
    (tmp_path / "project").mkdir()
    script = write(tmp_path / "project", "train.py", TRAIN)
    result = pypads(tmp_path, "run", "--experiment", "iris", "--record-calls", "project/train.py", "--depth", "2")
    assert result.returncode == 0, result.stderr
    # The script saw its own arguments, name and folder, as under `python project/train.py --depth 2`.
    assert f"argv ['--depth', '2'] name __main__ path0 {script.parent}" in result.stdout
    run = ended_run(store_of(tmp_path))
    assert run.status == "FINISHED"
    assert run.params["DecisionTreeClassifier.max_depth"] == "2"
    assert run.client.get_experiment(run.run.info.experiment_id).name == "iris"

    listed = pypads(tmp_path, "runs", "--max", "5")
    assert listed.returncode == 0, listed.stderr
    header, _rule, row = listed.stdout.splitlines()
    assert "DecisionTreeClassifier.accuracy_score_X" in header
    assert row.split()[:4] == [run.run_id[:8], run.run.info.run_name, "iris", "FINISHED"]

    calls = pypads(tmp_path, "calls", run.run_id)
    assert calls.returncode == 0, calls.stderr
    counts = {line.split()[0]: line.split()[1] for line in calls.stdout.splitlines()[2:-1]}
    assert counts == {"sklearn.metrics._classification.accuracy_score": "1",
                      "sklearn.tree._classes.DecisionTreeClassifier.fit": "1",
                      "sklearn.tree._classes.DecisionTreeClassifier.predict": "1"}

    shown = pypads(tmp_path, "runs", "show", run.run_id[:8])
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    facts = dict(line.split(None, 1) for line in text.split("\n\n")[0].splitlines())
    assert facts["run"].split() == [run.run_id, run.run.info.run_name]
    assert facts["experiment"] == "iris" and facts["status"] == "FINISHED" and facts["duration"].endswith(" s")
    assert "tag pypads.python" in text and "pypads.host" in text
    assert "params (" in text and "DecisionTreeClassifier.max_depth" in text
    assert "metrics (" in text and "DecisionTreeClassifier.accuracy_score_X" in text
    assert "models (1)" in text and "datasets (" in text
    environment = text.split("environment (environment/system.json)\n", 1)[1]
    labels = [line.split()[0] for line in environment.splitlines()]
    assert labels[:3] == ["system", "cpu", "memory"] and "process" in labels
    assert f"python {sys.version.split()[0]}" in environment and "logical cores" in environment
    missing = pypads(tmp_path, "runs", "show", "0" * 32)
    assert missing.returncode == 1 and "no run '" in missing.stderr

    unknown = pypads(tmp_path, "runs", "--experiment", "nope")
    assert unknown.returncode == 1
    assert "no experiment 'nope'" in unknown.stderr and "'iris'" in unknown.stderr


def test_run_exits_as_python_would(tmp_path):
    write(tmp_path, "fails.py", "import sys\n\ndef main():\n    raise ValueError('bad data')\n\nmain()\n")
    failed = pypads(tmp_path, "run", "fails.py")
    assert failed.returncode == 1
    # The script's traceback, without the frames of pypads' command or runpy.
    traceback = failed.stderr[failed.stderr.index("Traceback"):].splitlines()
    assert traceback[1] == f'  File "{tmp_path / "fails.py"}", line 6, in <module>'
    assert "ValueError: bad data" in traceback  # pypads' own log lines may come after it
    assert "pypads/cli" not in failed.stderr and "runpy" not in failed.stderr
    run = ended_run(store_of(tmp_path))
    assert run.status == "FAILED"
    assert "ValueError: bad data" in run.artifact_text("failure/traceback.txt")

    write(tmp_path, "exits.py", "import sys\nsys.exit(3)\n")
    assert pypads(tmp_path, "run", "exits.py").returncode == 3


def test_run_refuses_bad_input_with_one_clear_line(tmp_path):
    missing = pypads(tmp_path, "run", "nowhere.py")
    assert missing.returncode == 1
    assert missing.stderr.strip() == "pypads run: error: nowhere.py: no such script file"
    write(tmp_path, "empty.py", "")
    config = pypads(tmp_path, "run", "--config", '{"colour": "red"}', "empty.py")
    assert config.returncode == 1
    assert "pypads run: error: config: at $: unknown key 'colour'" in config.stderr
    assert not (tmp_path / "home" / "journal").exists() or not any((tmp_path / "home" / "journal").iterdir())


def test_sync_uploads_the_journal_of_a_killed_script(tmp_path):
    # An uploader thread dies with its script: SIGKILL leaves the run in the journal.
    write(tmp_path, "killed.py", textwrap.dedent("""\
        import os, signal
        from sklearn import datasets
        from sklearn.tree import DecisionTreeClassifier
        X, y = datasets.load_iris(return_X_y=True)
        DecisionTreeClassifier(max_depth=4).fit(X, y)
        os.kill(os.getpid(), signal.SIGKILL)
    """))
    killed = pypads(tmp_path, "run", "--config", json.dumps({"uploader": "thread"}), "killed.py")
    assert killed.returncode == -signal.SIGKILL
    assert len(list((tmp_path / "home" / "journal").iterdir())) == 1

    synced = pypads(tmp_path, "sync")
    assert synced.returncode == 0, synced.stderr
    assert "[1/1]" in synced.stderr
    assert synced.stdout.startswith("recovered 1 run(s)")
    run = only_run(store_of(tmp_path))
    assert run.status == "KILLED"
    assert run.params["DecisionTreeClassifier.max_depth"] == "4"
    assert run.run_id in synced.stdout
    assert not any((tmp_path / "home" / "journal").iterdir())

    again = pypads(tmp_path, "sync")
    assert again.returncode == 0 and again.stdout.startswith("nothing to sync")


def test_mappings_check_shows_what_a_file_patches_and_names_what_is_wrong(tmp_path):
    good = pypads(tmp_path, "mappings", "check", str(MAPPINGS / "sklearn_1.json"))
    assert good.returncode == 0, good.stderr
    assert "sklearn: 3 entries, 3 resolve, 0 do not" in good.stdout
    assert "pypads_cross_validate: 2 attribute(s): cross_val_score, cross_validate" in good.stdout

    # The other shipped files, on the versions installed here: what each reads of a call too.
    others = pypads(tmp_path, "mappings", "check", *(str(MAPPINGS / name) for name in
                                                     ("xgboost_3.json", "lightgbm_4.json", "statsmodels_0.json")))
    assert others.returncode == 0, others.stderr
    assert re.search(r"^  xgboost(-cpu)? 3\.\d+\.\d+ is installed$", others.stdout, re.MULTILINE), others.stdout
    for library, entries in (("xgboost", 3), ("lightgbm", 3), ("statsmodels", 1)):
        assert f"{library}: {entries} entries, {entries} resolve, 0 do not" in others.stdout
    assert ("reads train: params from arguments.params, arguments.num_boost_round, arguments.early_stopping_rounds; "
            "data from arguments.dtrain.get_data() and arguments.dtrain.get_label(); "
            "evaluation sets from arguments.evals; the model is its result (xgboost flavour)") in others.stdout
    assert "feature_importance.csv and a chart of its gain" in others.stdout
    assert "reads fit: params from instance._get_init_kwds()" in others.stdout

    metadata = {"library": "sklearn", "distribution": "scikit-learn", "library_versions": ">=1.0",
                "mapping_version": "1.0.0"}
    tree = {"name": "tree", "implementation": {"sklearn": "sklearn.tree.DecisionTreeClassifier"},
            "hooks": {"pypads_fit": ["fit"]}}
    broken = write(tmp_path, "broken.json",
                   json.dumps({"metadata": metadata, "algorithms": [{**tree, "colour": "red"}]}))
    missing = {**tree, "implementation": {"sklearn": "sklearn.tree.NoSuchTree"}}
    absent = write(tmp_path, "absent.json", json.dumps({"metadata": metadata, "algorithms": [tree, missing]}))
    bad = pypads(tmp_path, "mappings", "check", "broken.json", "absent.json")
    assert bad.returncode == 1
    assert "error: broken.json: at $.algorithms[0]: unknown key(s) 'colour'" in bad.stderr
    assert "sklearn: 2 entries, 1 resolve, 1 do not" in bad.stdout
    assert ("error: absent.json: at $.algorithms[1].implementation.sklearn: 'sklearn.tree.NoSuchTree' "
            "does not exist: the module sklearn.tree has no attribute 'NoSuchTree'") in bad.stderr
    assert f"2 of 2 mapping file(s) would be refused: {broken.name}, {absent.name}" in bad.stderr


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answers(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status
    except (urllib.error.URLError, OSError):
        return None


def test_ui_serves_the_store_until_stopped(tmp_path):
    port = free_port()
    environment = {**script_environment(tmp_path), "MLFLOW_DISABLE_TELEMETRY": "true"}
    # A session of its own: the UI's server processes are stopped together at the end.
    server = subprocess.Popen([str(PYPADS), "ui", "--port", str(port)], cwd=tmp_path, env=environment,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        first = server.stdout.readline()
        url = f"http://127.0.0.1:{port}"
        assert first.startswith(f"MLflow UI for {store_of(tmp_path)}: {url}")
        deadline = time.monotonic() + 150  # MLflow's server starts in 5-40 s on a busy machine
        while answers(url) != 200:
            assert server.poll() is None, "the UI stopped before answering"
            assert time.monotonic() < deadline, f"{url} did not answer within 150 s"
            time.sleep(0.5)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=10)
        server.stdout.close()
    assert answers(url) is None
