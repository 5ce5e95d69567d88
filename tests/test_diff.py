"""``pypads diff`` and ``pypads.results.diff``: real runs of a script in a real git
repository, into a real SQLite store, compared as a user sees it (text, JSON, HTML)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from conftest import script_environment
from mlflow.tracking import MlflowClient

from pypads import results
from pypads.run_diff import MAX_PATCH_DIFF_LINES, compare_code, compare_packages

PYPADS = Path(sys.executable).with_name("pypads")
SKLEARN = metadata.version("scikit-learn")
TRAIN = textwrap.dedent("""\
    import argparse, json, os
    from pypads import PyPads
    tracker = PyPads(name="diff", config=json.loads(os.environ.get("DIFF_CONFIG", "{}")))
    from sklearn import datasets, metrics
    from sklearn.tree import DecisionTreeClassifier
    parser = argparse.ArgumentParser()
    parser.add_argument("--depth", type=int)
    parser.add_argument("--rows", type=int)
    parser.add_argument("--balanced", action="store_true")
    options = parser.parse_args()
    X, y = datasets.load_iris(return_X_y=True, as_frame=True)
    X, y = X.sample(frac=1, random_state=0).iloc[:options.rows], y.sample(frac=1, random_state=0).iloc[:options.rows]
    model = DecisionTreeClassifier(max_depth=options.depth, random_state=0).fit(X, y)
    metrics.accuracy_score(y, model.predict(X))
    if options.balanced:
        metrics.balanced_accuracy_score(y, model.predict(X))
    print("RUN", tracker.run_id)
""")


def git(repository: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repository, check=True, capture_output=True, text=True).stdout


def train(folder: Path, *argv: str, config: dict[str, Any] | None = None) -> str:
    """Runs train.py in the repository ``folder/project``; returns its run id."""
    environment = {**script_environment(folder), "DIFF_CONFIG": json.dumps(config or {})}
    done = subprocess.run([sys.executable, "train.py", *argv], cwd=folder / "project", env=environment,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return done.stdout.split("RUN ")[1].split()[0]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, empty_store: Path) -> dict[str, Any]:
    """Run A: depth 2 on 150 rows in a clean working tree, its requirements.txt then
    replaced as if an older scikit-learn had been installed; run B: depth 3 on 100
    rows, a second metric, an uncommitted change; run C: as B, its packages not
    recorded (IPackages disabled)."""
    folder = tmp_path_factory.mktemp("diff")
    (folder / "home").mkdir()
    shutil.copyfile(empty_store, folder / "home" / "mlflow.db")
    project = folder / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    git(project, "config", "user.email", "ds@example.org")
    git(project, "config", "user.name", "Data Scientist")
    (project / "train.py").write_text(TRAIN)
    (project / "notes.txt").write_text("first line\n")
    git(project, "add", ".")
    git(project, "commit", "-q", "-m", "first commit")

    run_a = train(folder, "--depth", "2", "--rows", "150")
    uri = f"sqlite:///{folder / 'home' / 'mlflow.db'}"
    client = MlflowClient(uri)
    local = Path(client.download_artifacts(run_a, "environment/requirements.txt", str(folder)))
    pins = [line for line in local.read_text().splitlines() if not line.lower().startswith(("scikit-learn==", "pyyaml=="))]
    changed = folder / "older" / "requirements.txt"
    changed.parent.mkdir()
    changed.write_text("\n".join([*pins, "scikit-learn==1.0.0", "left-pad==0.1"]) + "\n")
    client.log_artifact(run_a, str(changed), "environment")

    (project / "notes.txt").write_text("first line\nan uncommitted change\n")
    run_b = train(folder, "--depth", "3", "--rows", "100", "--balanced")
    run_c = train(folder, "--depth", "3", "--rows", "100", config={"disabled": ["IPackages"]})
    return {"folder": folder, "uri": uri, "a": run_a, "b": run_b, "c": run_c, "client": client}


def pypads(runs: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    """``pypads ARGS --uri STORE``, as a user types it."""
    environment = {**script_environment(runs["folder"]), "MLFLOW_DISABLE_TELEMETRY": "true"}
    return subprocess.run([str(PYPADS), *args, "--uri", runs["uri"]], cwd=runs["folder"], env=environment,
                          capture_output=True, text=True, timeout=120)


def test_the_terminal_shows_what_changed_and_one_line_for_the_rest(runs):
    shown = pypads(runs, "diff", runs["a"][:8], runs["b"][:10])
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].split()[:2] == ["A", runs["a"]] and lines[1].split()[:2] == ["B", runs["b"]]
    assert ["DecisionTreeClassifier.max_depth", "2", "3"] in [line.split() for line in lines]

    found = results.diff(runs["a"], runs["b"], uri=runs["uri"])
    training = found["datasets"]["changed"]["X (training)"]
    assert training["digest"]["changed"] and training["profile"]["num_rows"] == {"a": 150, "b": 100}
    assert training["digest"]["a"] in shown.stdout and training["digest"]["b"] in shown.stdout
    assert ["num_rows", "150", "100"] in [line.split() for line in lines]

    key = "DecisionTreeClassifier.accuracy_score_X"
    scores = [runs["client"].get_run(run_id).data.metrics[key] for run_id in (runs["a"], runs["b"])]
    delta = found["metrics"]["changed"][key]["delta"]
    assert delta == pytest.approx(scores[1] - scores[0]) and delta != 0
    assert [key, f"{scores[0]:.6g}", f"{scores[1]:.6g}", f"{delta:+.6g}"] == \
        next(line.split() for line in lines if line.strip().startswith(key))[:4]
    assert "DecisionTreeClassifier.balanced_accuracy_score_X" in found["metrics"]["only_b"]
    assert not any(name.startswith("system/") for part in ("changed", "only_a", "only_b") for name in found["metrics"][part])
    assert shown.stdout.index("\nmetrics") < shown.stdout.index("\nsystem metrics")  # system metrics last

    assert ["scikit-learn", "1.0.0", SKLEARN, "upgraded"] in [line.split() for line in lines]
    assert ["left-pad", "0.1", "(none)", "removed"] in [line.split() for line in lines]
    assert ["pyyaml", "(none)", metadata.version("pyyaml"), "added"] in [line.split() for line in lines]

    code = found["code"]
    assert not code["commit"]["changed"] and code["branch"]["a"] == "main"
    assert code["dirty"] == {"a": "False", "b": "True", "changed": True}
    assert code["patch"]["a"] == "clean" and code["patch"]["b"] == "recorded" and code["patch"]["changed"]
    assert "++an uncommitted change" in shown.stdout  # a line the patch adds, in the diff of the patches
    assert ["uncommitted", "changes", "clean", "recorded"] in [line.split() for line in lines]

    summary = next(line for line in lines if line.startswith("unchanged: "))
    assert "git commit" in summary and "git branch" in summary and "mapping files" in summary
    assert "params" in summary and "packages" in summary
    assert "DecisionTreeClassifier.random_state" not in shown.stdout  # unchanged params are only counted


def test_json_is_for_scripts_and_html_is_a_page(runs):
    page = runs["folder"] / "diff.html"
    printed = pypads(runs, "diff", runs["a"], runs["b"], "--json", "--html", str(page))
    assert printed.returncode == 0, printed.stderr
    found = json.loads(printed.stdout)
    assert set(found) == {"runs", "params", "datasets", "code", "packages", "mappings", "metrics", "system_metrics"}
    assert found["params"]["changed"]["DecisionTreeClassifier.max_depth"] == {"a": "2", "b": "3"}
    assert found["packages"]["changed"]["scikit-learn"] == {"a": "1.0.0", "b": SKLEARN, "direction": "upgraded"}
    assert found["runs"]["a"]["run_id"] == runs["a"] and found["mappings"]["changed"] is False
    assert found == results.diff(runs["a"], runs["b"], uri=runs["uri"])

    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<link" not in html and "<script" not in html
    delta = found["metrics"]["changed"]["DecisionTreeClassifier.accuracy_score_X"]["delta"]
    digest = found["datasets"]["changed"]["X (training)"]["digest"]
    for shown in ["DecisionTreeClassifier.max_depth", "<td>2</td><td>3</td>", digest["a"], digest["b"],
                  f"{delta:+.6g}", f"<td>scikit-learn</td><td>1.0.0</td><td>{SKLEARN}</td>", "an uncommitted change"]:
        assert shown in html, shown


def test_packages_not_recorded_are_said_so(runs):
    shown = pypads(runs, "diff", runs["b"], runs["c"])
    assert shown.returncode == 0, shown.stderr
    assert "run B did not record its packages (environment/requirements.txt), not compared" in shown.stdout
    assert "not recorded: packages (B)" in shown.stdout
    assert "packages" not in shown.stdout.split("unchanged: ")[1].splitlines()[0]
    found = results.diff(runs["b"], runs["c"], uri=runs["uri"])
    assert found["packages"]["recorded"] == {"a": True, "b": False, "changed": True}
    assert found["params"]["changed"] == {} and found["code"]["patch"]["changed"] is False


def test_a_run_that_is_not_there_is_exit_status_2_naming_it(runs):
    for missing in ("0" * 32, "zzzz"):
        shown = pypads(runs, "diff", runs["a"], missing)
        assert shown.returncode == 2
        assert shown.stderr.startswith("pypads diff: error: ") and repr(missing) in shown.stderr
        assert "Traceback" not in shown.stderr and len(shown.stderr.splitlines()) == 1
    with pytest.raises(results.ResultsError, match=f"no run '{'1' * 32}'"):
        results.diff("1" * 32, runs["b"], uri=runs["uri"])


def test_the_diff_of_two_patches_is_bounded():
    long_patch = "\n".join(f"+line {number}" for number in range(3 * MAX_PATCH_DIFF_LINES))
    code = compare_code({}, {"pypads.git.dirty": "True"}, None, long_patch, "a" * 32, "b" * 32)
    assert code["patch"]["cut"] and len(code["patch"]["diff"].splitlines()) == MAX_PATCH_DIFF_LINES
    assert code["patch"]["a"] == "not recorded" and code["commit"] == {"a": None, "b": None, "changed": False}


def test_packages_are_matched_by_canonical_name_and_ordered_by_version():
    found = compare_packages("Scikit_Learn==1.4.0\nnumpy==2.0\n", "scikit-learn==1.10.0\nnumpy==1.26\nrich==13\n")
    assert found["changed"]["scikit-learn"]["direction"] == "upgraded"  # 1.10 > 1.4, as versions
    assert found["changed"]["numpy"]["direction"] == "downgraded"
    assert found["added"] == {"rich": "13"} and found["removed"] == {} and found["unchanged"] == 0


def test_data_fitted_on_twice_under_one_name_is_compared_in_order(make_tracker, store_uri):
    from sklearn import datasets
    from sklearn.tree import DecisionTreeClassifier

    features, labels = datasets.load_iris(return_X_y=True)
    run_ids = []
    for sizes in ((60, 150), (60, 120)):  # the second fit of the second run had fewer rows
        tracker = make_tracker(name="twice")
        for size in sizes:
            X, y = features[:size], labels[:size]
            DecisionTreeClassifier(random_state=0).fit(X, y)
        run_ids.append(tracker.run_id)
        tracker.deactivate()
    found = results.diff(*run_ids, uri=store_uri)["datasets"]
    assert "X (training)" not in found["changed"]  # the first fits took the same data
    assert found["changed"]["X (training) #2"]["profile"]["num_rows"] == {"a": 150, "b": 120}


def test_a_schema_change_names_the_columns(make_tracker, store_uri):
    from sklearn import datasets
    from sklearn.tree import DecisionTreeClassifier

    from pypads.cli.diff import sections, summaries, text

    frame, labels = datasets.load_iris(return_X_y=True, as_frame=True)
    narrower = frame.drop(columns=["petal width (cm)"]).astype({"sepal length (cm)": "int64"})
    run_ids = []
    for data in (frame, narrower):
        tracker = make_tracker(name="schema")
        X = data.copy()  # a dataset is named after the one variable that holds it
        DecisionTreeClassifier(random_state=0).fit(X, labels)
        run_ids.append(tracker.run_id)
        tracker.deactivate()
    found = results.diff(*run_ids, uri=store_uri)
    assert list(found["datasets"]["changed"]) == ["X (training)"], found["datasets"]
    schema = found["datasets"]["changed"]["X (training)"]["schema"]
    assert schema["removed"] == {"petal width (cm)": "double"}
    assert schema["changed"] == {"sepal length (cm)": {"a": "double", "b": "long"}}
    shown = [line.split() for line in text(found["runs"], sections(found), summaries(found)).splitlines()]
    assert ["column", "petal", "width", "(cm)", "double", "(none)"] in shown
    assert ["column", "sepal", "length", "(cm)", "double", "long"] in shown
