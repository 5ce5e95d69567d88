"""Pre-run loggers in a real subprocess, in a real git repository, and secrets kept out."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from conftest import only_run, run_script, script_environment

from pypads.core.privacy import redact_argv, redact_url
from pypads.core.schemas import PIPELINE_GRAPH, SYSTEM, validate

SECRET = "s3cr3t-T0KEN-4242"
SCRIPT = """
import sys, time
from pypads import PyPads, DEFAULT_CONFIG
from pypads.recording.run_loggers import DEFAULT_INIT_RUN_FNS, HardwareSampler
PyPads(name="run-loggers", init_run_fns=[*DEFAULT_INIT_RUN_FNS, HardwareSampler(interval=0.05)],
       config={"env_allowlist": ["PYPADS_VISIBLE"],
               "events": {**DEFAULT_CONFIG["events"], "autolog": {"on": ["pypads_fit"]}}})
from sklearn import datasets, metrics
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
X, y = datasets.load_iris(return_X_y=True)
model = Pipeline([("scale", StandardScaler()), ("clf", LogisticRegression(max_iter=500))]).fit(X, y)
metrics.accuracy_score(y, model.predict(X))
time.sleep(0.3)
print("hello from the script")
print("and a warning", file=sys.stderr)
"""


def git(repository: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repository, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repository(tmp_path, empty_store):
    work = tmp_path / "project"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    git(work, "config", "user.email", "ds@example.org")
    git(work, "config", "user.name", "Data Scientist")
    (work / "train.py").write_text(SCRIPT)
    (work / "notes.txt").write_text("first line\n")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "first commit")
    git(work, "remote", "add", "origin", f"https://ds:{SECRET}@git.example.org/team/project.git")
    (work / "notes.txt").write_text("first line\nan uncommitted change\n")
    (tmp_path / "home").mkdir()
    shutil.copyfile(empty_store, tmp_path / "home" / "mlflow.db")
    return work


def run_train(repository: Path, tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    environment = {**script_environment(tmp_path), "MY_API_TOKEN": SECRET, "PYPADS_VISIBLE": "shown"}
    return subprocess.run([sys.executable, "train.py", *argv], cwd=repository, env=environment,
                          capture_output=True, text=True, timeout=180)


def test_pre_run_loggers_in_a_git_repository(repository, tmp_path):
    head_before, status_before = git(repository, "rev-parse", "HEAD"), git(repository, "status", "--porcelain")
    result = run_train(repository, tmp_path, "--password", SECRET, f"--token={SECRET}")
    assert result.returncode == 0, result.stderr
    assert "hello from the script" in result.stdout  # the console still shows it
    run = only_run(f"sqlite:///{tmp_path / 'home' / 'mlflow.db'}")
    tags = run.tags

    assert tags["mlflow.source.git.commit"] == head_before.strip()
    assert tags["mlflow.source.git.branch"] == "main" and tags["pypads.git.dirty"] == "True"
    assert tags["mlflow.source.git.repoURL"] == "https://***@git.example.org/team/project.git"
    assert not any(key.startswith("pypads.git.") and key != "pypads.git.dirty" for key in tags)
    assert "+an uncommitted change" in run.artifact_text("git/uncommitted.patch")
    assert "first commit" in run.artifact_text("git/log.txt")
    # IGit only reads: same HEAD, same status, no new repository state
    assert git(repository, "rev-parse", "HEAD") == head_before
    assert git(repository, "status", "--porcelain") == status_before

    # the machine: three tags people filter by, the rest in environment/system.json
    import platform

    assert tags["pypads.python"] == platform.python_version()
    assert tags["pypads.os"].startswith(platform.system()) and tags["pypads.host"] == platform.node()
    for prefix in ("pypads.system.", "pypads.cpu.", "pypads.ram.", "pypads.disk.", "pypads.process.",
                   "pypads.network.", "pypads.python.executable"):
        assert not any(key.startswith(prefix) for key in tags), prefix
    system = json.loads(run.artifact_text("environment/system.json"))
    validate(system, SYSTEM)
    assert system["pseudonymized"] is False
    assert system["system"]["hostname"] == platform.node() and system["system"]["python"] == platform.python_version()
    assert system["cpu"]["logical_cores"] >= 1 and system["memory"]["total_gb"] > 0 and system["disk"]["total_gb"] > 0
    assert system["process"]["pid"] > 0 and system["process"]["executable"] == sys.executable
    command = system["process"]["command"]
    assert "--password ***" in command and "--token=***" in command
    assert all(value != 0 for section in system.values() if isinstance(section, dict)
               for key, value in section.items() if key != "swap_gb")
    assert len(run.artifact_bytes("environment/system.json")) < 2048
    assert tags["pypads.env.PYPADS_VISIBLE"] == "shown"
    assert not any(key.startswith("pypads.env.") and key != "pypads.env.PYPADS_VISIBLE" for key in tags)

    # the pipeline graph: expected nodes and data edges, and every JSON artifact follows its schema
    graph = json.loads(run.artifact_text("pipeline/graph.json"))
    calls = {node["id"]: node["call"] for node in graph["nodes"]}
    data = {(calls[edge["from"]], calls[edge["to"]], edge["argument"]) for edge in graph["edges"] if edge["kind"] == "data"}
    assert {("StandardScaler.fit_transform", "LogisticRegression.fit", "X"), ("Pipeline.fit", "Pipeline.predict", "instance"),
            ("Pipeline.predict", "accuracy_score", "y_pred")} <= data
    validate(graph, PIPELINE_GRAPH)
    assert "training_accuracy_score" in run.metrics  # MLflow's autolog, inside this run
    assert len(run.metric_history("process.rss_mb")) >= 2  # the hardware sampler

    requirements = run.artifact_text("environment/requirements.txt").splitlines()
    assert f"scikit-learn=={metadata.version('scikit-learn')}" in requirements
    assert "hello from the script" in run.artifact_text("console/stdout.txt")
    assert "and a warning" in run.artifact_text("console/stderr.txt")

    # the secret is nowhere in the run: params, tags, metrics, artifacts
    everything = [*run.params.items(), *tags.items(), *map(str, run.metrics.items())]
    assert not [item for item in everything if SECRET in str(item)]
    assert not [path for path in run.artifacts() if SECRET.encode() in run.artifact_bytes(path)]


FAKE_HOST, FAKE_USER, FAKE_NODE = "pypads-test-host-7f3a9c", "pypads-test-user-5150", 0x0242AC11BEEF
FAKE_MAC = "02:42:ac:11:be:ef"
# The script names its machine: a real hostname may be too short to search for ("vm").
PRETEND = f"""
import platform, socket, uuid
platform.node = lambda: {FAKE_HOST!r}
socket.gethostname = lambda: {FAKE_HOST!r}
socket.gethostbyname = lambda name: "10.11.12.13"
uuid.getnode = lambda: {FAKE_NODE}
"""


def test_pseudonymize_hides_host_ip_mac_and_user_everywhere_and_disable_by_name(repository, tmp_path):
    (repository / "train.py").write_text(PRETEND + SCRIPT.replace(
        '"env_allowlist": ["PYPADS_VISIBLE"]', '"pseudonymize": True, "disabled": ["IGit", "IPackages"]'))
    environment = {**script_environment(tmp_path), "USER": FAKE_USER, "LOGNAME": FAKE_USER}
    result = subprocess.run([sys.executable, "train.py"], cwd=repository, env=environment,
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    run = only_run(f"sqlite:///{tmp_path / 'home' / 'mlflow.db'}")
    import platform

    system = json.loads(run.artifact_text("environment/system.json"))
    validate(system, SYSTEM)
    assert system["pseudonymized"] is True
    hidden = [system["system"]["hostname"], system["system"]["user"], system["network"]["ip"], system["network"]["mac"]]
    assert all(value.startswith("anon-") for value in hidden) and len(set(hidden)) == 4
    assert run.tags["pypads.host"] == system["system"]["hostname"]
    assert run.tags["mlflow.user"] == system["system"]["user"] == run.run.info.user_id  # MLflow's own user too
    # Nowhere in the run: tags, params, metric names, every artifact's bytes, the run's user.
    secrets = [FAKE_HOST, FAKE_USER, FAKE_MAC, FAKE_MAC.replace(":", ""), "10.11.12.13"]
    if len(platform.node()) >= 6:  # long enough not to be found by chance
        secrets.append(platform.node())
    client = run.client
    for listed in client.search_runs([run.run.info.experiment_id]):  # the run and its child runs
        everything = [*listed.data.params.items(), *listed.data.tags.items(), *listed.data.metrics,
                      listed.info.user_id, listed.info.run_name]
        assert not [(secret, item) for secret in secrets for item in everything if secret in str(item)]
    for path in run.artifacts():
        data = run.artifact_bytes(path)
        assert not [secret for secret in secrets if secret.encode() in data], path
    assert not any(key.startswith("pypads.git.") for key in run.tags)
    assert "environment/requirements.txt" not in run.artifacts()


def test_outside_a_repository_igit_logs_nothing(tmp_path, make_tracker, read_run, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tracker = make_tracker()
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    assert not any(key.startswith("pypads.git.") for key in run.tags)
    assert "pypads.failure.IGit" not in run.tags


def test_outside_a_repository_gitpython_is_not_even_imported(tmp_path):
    # GitPython's import costs 0.1 s on a thread that shares the interpreter's lock with the script.
    code = ("import threading\n"
            "from pypads import PyPads\n"
            "tracker = PyPads()\n"
            "for thread in threading.enumerate():\n"
            "    if thread.name == 'pypads-run-loggers':\n"
            "        thread.join()\n"
            "import sys\n"
            "print('git' in sys.modules)\n"
            "tracker.end_run()\n")
    result = run_script(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False"]


def test_a_repository_is_found_above_the_folder_and_through_a_worktree_file(tmp_path):
    from pypads.recording.run_loggers.git import in_repository

    assert not in_repository(str(tmp_path))
    (tmp_path / "project" / "src").mkdir(parents=True)
    (tmp_path / "project" / ".git").mkdir()
    assert in_repository(str(tmp_path / "project" / "src"))
    (tmp_path / "worktree").mkdir()
    (tmp_path / "worktree" / ".git").write_text("gitdir: /elsewhere/.git/worktrees/worktree\n")
    assert in_repository(str(tmp_path / "worktree"))


def test_unknown_disabled_name_is_refused(store_uri):
    from pypads import ConfigError, PyPads

    with pytest.raises(ConfigError, match="unknown logger 'IGti'"):
        PyPads(uri=store_uri, config={"disabled": ["IGti"]})


def test_redaction_rules():
    assert redact_url("ssh://git:pw@host/x and https://tok@h/y") == "ssh://***@host/x and https://***@h/y"
    assert redact_argv(["train.py", "--api-key", "k", "--lr", "0.1", "--secret=x", "-p", "1"]) == \
        ["train.py", "--api-key", "***", "--lr", "0.1", "--secret=***", "-p", "1"]


def test_hardware_sampler_logs_metrics_over_time_and_stops(make_tracker, read_run):
    import threading
    import time

    from pypads.recording.run_loggers import DEFAULT_INIT_RUN_FNS, HardwareSampler

    tracker = make_tracker(init_run_fns=[*DEFAULT_INIT_RUN_FNS, HardwareSampler(interval=0.05)])
    # The sampler starts after the other start-up loggers, on their thread: a busy host delays it.
    deadline = time.monotonic() + 60
    while not any(thread.name == "pypads-hardware-sampler" for thread in threading.enumerate()):
        assert time.monotonic() < deadline, "the hardware sampler never started"
        time.sleep(0.05)
    time.sleep(0.6)
    run_id = tracker.run_id
    tracker.end_run()
    assert not any(thread.name == "pypads-hardware-sampler" for thread in threading.enumerate())
    history = read_run(run_id).metric_history("process.rss_mb")
    assert len(history) >= 3 and [step for step, _ in history] == list(range(len(history)))
    assert all(value > 10 for _, value in history)


def test_mlflow_autolog_writes_into_the_pypads_run(make_tracker, read_run):
    from mlflow.tracking import MlflowClient
    from sklearn import datasets
    from sklearn.tree import DecisionTreeClassifier

    tracker = make_tracker(config={"events": {"autolog": {"on": ["pypads_fit"]}, "parameters": {"on": ["pypads_fit"]}}})
    X, y = datasets.load_iris(return_X_y=True)
    DecisionTreeClassifier(max_depth=2).fit(X, y)
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    assert "training_accuracy_score" in run.metrics  # written by MLflow's sklearn autolog
    assert run.params["max_depth"] == "2" and run.params["DecisionTreeClassifier.max_depth"] == "2"
    client = MlflowClient(run.uri)
    assert len(client.search_runs([run.run.info.experiment_id])) == 1  # no run of its own
    DecisionTreeClassifier(max_depth=3).fit(X, y)  # after the run: autolog is off again
    assert len(client.search_runs([run.run.info.experiment_id])) == 1


GALLERY = """
from pypads import PyPads
PyPads(name="gallery")
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import train_test_split
X, y = load_iris(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
forest = RandomForestClassifier(n_estimators=10, random_state=0).fit(X_train, y_train)
logistic = LogisticRegression(max_iter=500).fit(X_train, y_train)
for model in (forest, logistic):
    predicted = model.predict(X_test)
    accuracy_score(y_test, predicted)
    f1_score(y_test, predicted, average="macro")
"""


def test_a_gallery_run_and_its_child_runs_have_at_most_ten_tags_outside_mlflow(repository, tmp_path):
    (repository / "gallery.py").write_text(GALLERY)
    environment = script_environment(tmp_path)
    result = subprocess.run([sys.executable, "gallery.py"], cwd=repository, env=environment,
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    run = only_run(f"sqlite:///{tmp_path / 'home' / 'mlflow.db'}")
    children = run.client.search_runs([run.run.info.experiment_id], f"tags.`mlflow.parentRunId` = '{run.run_id}'")
    assert sorted(child.info.run_name for child in children) == ["LogisticRegression", "RandomForestClassifier"]
    for listed in [run.run, *children]:
        own = sorted(key for key in listed.data.tags if not key.startswith("mlflow."))
        assert len(own) <= 10, (listed.info.run_name, own)
        assert not [key for key in own if key.startswith("pypads.failure.")], own
    assert sorted(key for key in run.tags if not key.startswith("mlflow.")) == [
        "estimator_class", "estimator_name", "pypads.git.dirty", "pypads.host", "pypads.mappings", "pypads.os",
        "pypads.python", "pypads.version"]
    assert "sklearn_1.json 1.0.0" in run.tags["pypads.mappings"].split(", ")
    for child in children:
        assert sorted(key for key in child.data.tags if not key.startswith("mlflow.")) == [
            "estimator_class", "estimator_name", "pypads.model"]
    assert {"mlflow.source.git.commit", "mlflow.source.git.branch", "mlflow.source.git.repoURL"} <= set(run.tags)


def test_what_the_machine_does_not_tell_is_absent_never_zero(make_tracker, read_run, monkeypatch):
    import collections
    import socket
    import uuid

    import psutil

    from pypads import results

    frequency = collections.namedtuple("scpufreq", "current min max")
    readings = iter([frequency(0.0, 0.0, 0.0)])
    monkeypatch.setattr(psutil, "cpu_freq", lambda: next(readings, None))  # 0 on many VMs, then None
    monkeypatch.setattr(psutil, "cpu_count", lambda logical=True: 4 if logical else None)  # physical unknown
    monkeypatch.setattr(uuid, "getnode", lambda: 0x010000000001)  # multicast bit: Python made it up

    def unresolvable(name):
        raise OSError("no such host")

    monkeypatch.setattr(socket, "gethostbyname", unresolvable)
    for _ in range(2):
        tracker = make_tracker()
        run_id = tracker.run_id
        tracker.deactivate()
        facts = results.system(run_id, uri=read_run(run_id).uri)
        assert facts["cpu"] == {"logical_cores": 4}  # no min_mhz, max_mhz, physical_cores
        assert "mac" not in facts.get("network", {}) and "ip" not in facts.get("network", {})
        assert facts["memory"]["total_gb"] > 0 and facts["process"]["pid"] > 0
        assert "pypads.failure.ICpu" not in read_run(run_id).tags


def test_disabled_system_loggers_leave_their_section_out_and_all_disabled_no_file(make_tracker, read_run):
    from pypads import results

    tracker = make_tracker(config={"disabled": ["IMacAddress", "ISocketInfo", "IPid"]})
    run_id = tracker.run_id
    tracker.deactivate()
    facts = results.system(run_id, uri=read_run(run_id).uri)
    assert "network" not in facts and "process" not in facts and "cpu" in facts
    tracker = make_tracker(config={"disabled": ["ISystem", "ICpu", "IRam", "IDisk", "IPid", "ISocketInfo", "IMacAddress"]})
    run_id = tracker.run_id
    tracker.deactivate()
    run = read_run(run_id)
    assert "environment/system.json" not in run.artifacts()
    assert "pypads.host" not in run.tags
    with pytest.raises(results.ResultsError, match="has no environment/system.json"):
        results.system(run_id, uri=run.uri)
