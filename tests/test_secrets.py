"""Secrets stay out of what pypads prints, keeps and logs: console warnings, journal
files (owner-only), the salt (owner-only), the command line in system.json, params and env
tags, and a secret at any depth of a param, a call record, the call database or a search's results."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from pathlib import Path

import pytest
from conftest import RunView, journals_uploaded, only_run, run_script, store_of
from mlflow.tracking import MlflowClient

from pypads.core import privacy
from pypads.core.privacy import REDACTED, is_secret_name, redact_argv, redact_params, redact_text
from pypads.core.pseudonyms import load_salt
from pypads.to_mlflow.store import Store

PASSWORD = "hunter2"
DEAD_SERVER = f"http://alice:{PASSWORD}@127.0.0.1:9"  # port 9 (discard): nothing answers there

FIT = """
from sklearn.tree import DecisionTreeClassifier
DecisionTreeClassifier().fit([[0], [1]], [0, 1])
"""


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
def test_a_password_in_the_tracking_uri_is_never_printed_and_the_journal_is_owner_only(tmp_path):
    code = "from pypads import PyPads\ntracker = PyPads(config={'flush_timeout': 1})\n" + FIT
    result = run_script(code, tmp_path, env={"MLFLOW_TRACKING_URI": DEAD_SERVER})

    assert result.returncode == 0, result.stderr
    assert "did not answer" in result.stderr  # the warning is there, with the URI shown
    assert "127.0.0.1:9" in result.stderr
    assert PASSWORD not in result.stderr + result.stdout
    home = tmp_path / "home"
    assert _mode(home / "salt") == 0o600
    [journal] = (home / "journal").iterdir()  # left behind: the server never answered
    assert _mode(journal) == 0o700
    for path in journal.rglob("*"):
        assert _mode(path) == (0o700 if path.is_dir() else 0o600), path
        # meta.json keeps the URI the uploader connects with; nothing else has the password
        if path.is_file() and path.name != "meta.json":
            assert PASSWORD.encode() not in path.read_bytes(), path


def test_hydra_overrides_and_passphrases_stay_out_of_the_command_line(tmp_path, store_uri):
    script = tmp_path / "train.py"
    script.write_text(f"from pypads import PyPads\ntracker = PyPads(uri={store_uri!r})\n" + FIT)
    arguments = ["db.password=hunter2", "+db.password=hunter4", "--passphrase", "hunter3", "API_KEY=hunter5", "lr=0.1"]
    result = run_script(
        f"import runpy, sys\nsys.argv = [{str(script)!r}, *{arguments!r}]\nrunpy.run_path(sys.argv[0], run_name='__main__')\n",
        tmp_path,
    )

    assert result.returncode == 0, result.stderr
    run = only_run(store_uri)
    command = json.loads(run.artifact_text("environment/system.json"))["process"]["command"]
    assert not any(key.startswith("pypads.process.") for key in run.tags)  # no longer a tag
    assert "lr=0.1" in command and "db.password=***" in command and "--passphrase ***" in command
    for secret in ("hunter2", "hunter3", "hunter4", "hunter5"):
        assert secret not in command


def test_an_estimator_param_named_like_a_secret_is_logged_redacted(make_tracker, read_run):
    tracker = make_tracker()
    from sklearn.tree import DecisionTreeClassifier

    class TokenTree(DecisionTreeClassifier):
        def __init__(self, api_token: str = "hunter2", max_depth: int | None = None) -> None:
            super().__init__(max_depth=max_depth)
            self.api_token = api_token

    TokenTree(max_depth=2).fit([[0], [1]], [0, 1])
    run_id = tracker.run_id
    tracker.end_run()

    params = read_run(run_id).params
    assert params["TokenTree.api_token"] == REDACTED
    assert params["TokenTree.max_depth"] == "2"


def test_allowlisted_environment_variables_never_log_secrets(make_tracker, read_run, monkeypatch):
    monkeypatch.setenv("SERVICE_API_KEY", "hunter2")
    monkeypatch.setenv("DATABASE_URL", "postgresql://bob:hunter3@db:5432/x")
    tracker = make_tracker(config={"env_allowlist": ["SERVICE_API_KEY", "DATABASE_URL"]})
    run_id = tracker.run_id
    tracker.end_run()

    tags = read_run(run_id).tags
    assert tags["pypads.env.SERVICE_API_KEY"] == REDACTED
    assert tags["pypads.env.DATABASE_URL"] == "postgresql://***@db:5432/x"


def test_the_rules_on_names_and_their_false_positives():
    secret = ["api_token", "apiKey", "API_KEY", "--api-key", "db.password", "+db.password", "--passphrase",
              "client_secret", "HTTPToken", "key", "MLFLOW_TRACKING_PASSWORD"]
    not_secret = ["token_pattern", "tokenizer", "max_tokens", "monkey", "n_keys", "passthrough", "key_func", "lr", ""]
    assert [name for name in secret if not is_secret_name(name)] == []
    assert [name for name in not_secret if is_secret_name(name)] == []


def test_the_rules_on_text_argv_and_params():
    assert redact_argv(["train.py", "--password", "a", "--password=b", "--passphrase", "c", "db.password=d",
                        "+db.password=e", "API_KEY=f", "--lr", "0.1", "https://u:g@h/x?token=h&n=1"]) == \
        ["train.py", "--password", REDACTED, f"--password={REDACTED}", "--passphrase", REDACTED,
         f"db.password={REDACTED}", f"+db.password={REDACTED}", f"API_KEY={REDACTED}", "--lr", "0.1",
         f"https://{REDACTED}@h/x?token={REDACTED}&n=1"]
    assert redact_text("API request to http://a:p@ss@host/x failed (password='x y', lr=1)") == \
        f"API request to http://{REDACTED}@host/x failed (password={REDACTED}, lr=1)"
    assert redact_params({"api_token": "a", "uri": "http://u:b@h", "alpha": "1.0"}) == \
        {"api_token": REDACTED, "uri": f"http://{REDACTED}@h", "alpha": "1.0"}


def test_users_extend_the_secret_words(monkeypatch):
    monkeypatch.setattr(privacy, "SECRET_WORDS", [*privacy.SECRET_WORDS, "pin"])
    assert redact_argv(["--card-pin", "1234", "SIM_PIN=5678"]) == ["--card-pin", REDACTED, f"SIM_PIN={REDACTED}"]


def test_display_uri_hides_credentials_and_secret_query_values():
    store = Store("https://alice:hunter2@mlflow.example:5000/?access_token=abc&workspace=w", None)
    assert store.display_uri == f"https://{REDACTED}@mlflow.example:5000/?access_token={REDACTED}&workspace=w"
    assert Store("sqlite:////tmp/mlflow.db", None).display_uri == "sqlite:////tmp/mlflow.db"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
def test_the_salt_is_owner_only_stable_and_made_once(tmp_path):
    salts: list[str] = []
    threads = [threading.Thread(target=lambda: salts.append(load_salt(tmp_path))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(set(salts)) == 1 and len(salts[0]) == 32
    assert _mode(tmp_path / "salt") == 0o600
    assert sorted(os.listdir(tmp_path)) == ["salt"]  # no staging file left
    assert load_salt(tmp_path) == salts[0]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
def test_a_salt_left_readable_or_empty_by_an_older_pypads_is_mended(tmp_path):
    old = tmp_path / "old"
    old.mkdir()
    (old / "salt").write_text("0123456789abcdef0123")
    os.chmod(old / "salt", 0o644)
    assert load_salt(old) == "0123456789abcdef0123"
    assert _mode(old / "salt") == 0o600

    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "salt").write_text("")  # an older pypads killed between creating and writing it
    salt = load_salt(empty)
    assert len(salt) == 32 and (empty / "salt").read_text() == salt
    assert _mode(empty / "salt") == 0o600


def test_the_docs_list_the_secret_words():
    docs = (Path(__file__).parent.parent / "docs" / "loggers.md").read_text()
    assert [word for word in privacy.SECRET_WORDS if f"`{word}`" not in docs] == []


# Secrets at any depth: a dict-valued param, nested containers, a pipeline's steps,
# set_params, call records, the call database, a search's results. Each test runs a real
# script into a real store and looks for the secret everywhere the run can be read.

TOKEN = "sk-live-7f3a9c1e"
OTHER = "sk-live-0b5d2e44"
DATA = """
import numpy as np
def keep(X, **settings):  # a step that takes kw_args
    return X
X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [3.0, 0.0], [4.0, 1.0], [5.0, 0.0]])
y = np.array([0, 1, 0, 1, 0, 1])
"""


def _script(body: str, config: dict[str, object] | None = None) -> str:
    return f"from pypads import PyPads\ntracker = PyPads(config={config!r})\n" + DATA + body


def _runs(uri: str) -> list[RunView]:
    client = MlflowClient(uri)
    return [RunView(uri, run.info.run_id) for experiment in client.search_experiments()
            for run in client.search_runs([experiment.experiment_id])]


def _assert_nowhere(secrets: tuple[str, ...], tmp_path: Path, result: subprocess.CompletedProcess[str]) -> RunView:
    """None of ``secrets`` in any run of the store (params, tags, metric names, every
    artifact's bytes, read back through MLflow), in the script's output, nor in any file
    the run left on disk: the store's database, its artifacts and models, the journal."""
    assert result.returncode == 0, result.stderr
    run = only_run(store_of(tmp_path))
    for view in _runs(store_of(tmp_path)):
        texts = [*view.params, *view.params.values(), *view.tags, *view.tags.values(), *view.metrics]
        artifacts = view.artifacts()
        for secret in secrets:
            assert [text for text in texts if secret in text] == [], view.run_id
            assert [path for path in artifacts if secret.encode() in view.artifact_bytes(path)] == [], view.run_id
    for secret in secrets:
        assert secret not in result.stdout + result.stderr
    home = tmp_path / "home"
    assert journals_uploaded(home) == []  # nothing owed: the journal is gone, and held nothing of it
    files = [path for path in tmp_path.rglob("*") if path.is_file() and path.name != "script.py"]
    assert any(path.name == "mlflow.db" for path in files)
    for secret in secrets:
        assert [path for path in files if secret.encode() in path.read_bytes()] == []
    return run


def _call_lines(run: RunView, function: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in run.artifact_text(f"calls/{function}.jsonl").splitlines()]


@pytest.mark.usefixtures("home_with_store")
def test_a_secret_in_a_dict_valued_param_is_redacted_in_params_and_call_records(tmp_path):
    body = f"""
from sklearn.preprocessing import FunctionTransformer
transformer = FunctionTransformer(kw_args={{"api_token": {TOKEN!r}, "scale": 2}}).fit(X)
"""
    result = run_script(_script(body), tmp_path)

    run = _assert_nowhere((TOKEN,), tmp_path, result)
    assert run.params["FunctionTransformer.kw_args"] == "{'api_token': '***', 'scale': 2}"
    [output] = [line["output"] for line in _call_lines(run, "FunctionTransformer.fit") if "output" in line]
    assert output == "FunctionTransformer(kw_args={'api_token': '***', 'scale': 2})"
    assert run.tags["pypads.models.FunctionTransformer"].startswith("not saved: a param holds a secret")


@pytest.mark.usefixtures("home_with_store")
def test_secrets_deep_in_lists_tuples_sets_and_dicts_are_redacted(tmp_path):
    body = f"""
from collections import OrderedDict
from sklearn.preprocessing import FunctionTransformer
settings = {{"servers": [{{"host": "db", "password": {TOKEN!r}}}, ("mirror", OrderedDict(apiKey={OTHER!r}))],
            "tags": {{"a", "b"}}, "retries": 3}}
FunctionTransformer(kw_args={{"settings": settings}}).fit(X)
"""
    result = run_script(_script(body), tmp_path)

    run = _assert_nowhere((TOKEN, OTHER), tmp_path, result)
    logged = run.params["FunctionTransformer.kw_args"]
    redacted_ordered_dict = repr(OrderedDict(apiKey="***"))  # its repr changed in Python 3.12
    assert "'password': '***'" in logged and redacted_ordered_dict in logged and "'retries': 3" in logged


@pytest.mark.usefixtures("home_with_store")
def test_a_pipeline_step_holding_a_secret_is_redacted_in_its_deep_params_and_steps(tmp_path):
    body = f"""
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
pipeline = make_pipeline(StandardScaler(), FunctionTransformer(keep, kw_args={{"api_token": {TOKEN!r}}}), LogisticRegression())
pipeline.fit(X, y)
pipeline.predict(X)
pipeline.score(X, y)
"""
    result = run_script(_script(body), tmp_path)

    run = _assert_nowhere((TOKEN,), tmp_path, result)
    assert run.params["Pipeline.functiontransformer__kw_args"] == "{'api_token': '***'}"
    assert "kw_args={'api_token': '***'}" in run.params["Pipeline.steps"]
    assert "kw_args={'api_token': '***'}" in run.params["Pipeline.functiontransformer"]
    assert "Pipeline.logisticregression__C" in run.params  # the other params are all there


@pytest.mark.usefixtures("home_with_store")
def test_secrets_set_with_set_params_are_redacted(tmp_path):
    body = f"""
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
transformer = FunctionTransformer()
transformer.set_params(kw_args={{"client_secret": {TOKEN!r}}})
transformer.fit(X)
pipeline = make_pipeline(FunctionTransformer(keep), LogisticRegression())
pipeline.set_params(functiontransformer__kw_args={{"db": {{"passwd": {OTHER!r}}}}}, logisticregression__C=0.5)
pipeline.fit(X, y)
"""
    result = run_script(_script(body), tmp_path)

    run = _assert_nowhere((TOKEN, OTHER), tmp_path, result)
    assert run.params["FunctionTransformer.kw_args"] == "{'client_secret': '***'}"
    assert run.params["Pipeline.functiontransformer__kw_args"] == "{'db': {'passwd': '***'}}"
    assert run.params["Pipeline.logisticregression__C"] == "0.5"


@pytest.mark.usefixtures("home_with_store")
def test_call_records_of_every_layout_and_the_call_database_hold_no_secret(tmp_path):
    body = f"""
from sklearn.preprocessing import FunctionTransformer
FunctionTransformer(kw_args={{"api_token": {TOKEN!r}}}).fit(X)
def refuse(X, settings):
    raise ValueError(f"the service refused {{settings}}")
try:
    FunctionTransformer(func=refuse, kw_args={{"settings": {{"api_token": {OTHER!r}}}}}).fit(X).transform(X)
except ValueError as error:
    print("raised:", type(error).__name__)
"""
    config = {"events": {"output": {"on": ["pypads_fit", "pypads_transform"], "with": {"layout": "call"}},
                         "calls": {"on": ["pypads_fit", "pypads_transform"]}}}
    result = run_script(_script(body, config), tmp_path)

    run = _assert_nowhere((TOKEN, OTHER), tmp_path, result)
    outputs = [path for path in run.artifacts("calls") if path.endswith("output.txt")]
    assert outputs and all(REDACTED in run.artifact_text(path) for path in outputs if "fit" in path)
    database = run.artifacts("callmonitor")
    assert any(path.endswith(".jsonl") or path.endswith("record.json") for path in database)


@pytest.mark.usefixtures("home_with_store")
def test_a_search_over_secret_holding_params_keeps_them_out_of_its_results(tmp_path):
    body = f"""
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
pipeline = make_pipeline(FunctionTransformer(keep), LogisticRegression())
grid = {{"functiontransformer__kw_args": [{{"api_token": {TOKEN!r}}}, {{"api_token": {OTHER!r}}}]}}
GridSearchCV(pipeline, grid, cv=2).fit(X, y)
"""
    result = run_script(_script(body), tmp_path)

    run = _assert_nowhere((TOKEN, OTHER), tmp_path, result)
    assert run.params["best_functiontransformer__kw_args"] == "{'api_token': '***'}"
    assert "'api_token': '***'" in run.artifact_text("cv_results.csv")


def test_redact_walks_containers_and_estimators_without_changing_them():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer, StandardScaler

    from pypads.core.privacy import redact

    value = {"kw_args": {"api_token": "x"}, "steps": [("a", {"password": "y"}), {"n": 1}], "s": frozenset({1})}
    assert redact(value) == {"kw_args": {"api_token": REDACTED}, "steps": [("a", {"password": REDACTED}), {"n": 1}],
                             "s": frozenset({1})}
    assert value["kw_args"] == {"api_token": "x"}  # the caller's value is untouched
    clean = {"a": [1, (2, {"token_pattern": "x"})], "b": "c"}
    assert redact(clean) is clean  # nothing to hide: the very same object

    transformer = FunctionTransformer(kw_args={"api_token": "x"})
    pipeline = make_pipeline(StandardScaler(), transformer)
    shown = redact(pipeline)
    assert shown is not pipeline and "'api_token': '***'" in repr(shown) and "'x'" not in repr(shown)
    assert transformer.kw_args == {"api_token": "x"} and pipeline.steps[1][1] is transformer
    redacted = redact(pipeline.get_params(deep=True))
    assert redacted["functiontransformer__kw_args"] == {"api_token": REDACTED}
    assert redacted["functiontransformer"] is redacted["steps"][1][1]  # one copy per estimator

    cycle: list[object] = []
    cycle.append(cycle)
    assert redact(cycle) is cycle  # a cycle ends, at MAX_DEPTH at the latest
    assert redact(StandardScaler) is StandardScaler  # a class's get_params is not called


def test_redact_repr_hides_secret_keys_of_dict_reprs_cut_values_too():
    from pypads.core.privacy import redact_repr

    assert redact_repr("Foo(cfg={'api_token': 'x', \"secret\": 3, 'n': 1}, password='y')") == \
        "Foo(cfg={'api_token': '***', \"secret\": '***', 'n': 1}, password=***)"
    assert redact_repr("{'api_token': 'sk-12") == "{'api_token': '***'"
    assert redact_repr("[1, 2, 3]") == "[1, 2, 3]"


def test_redacting_a_value_without_containers_costs_next_to_nothing():
    import numpy as np

    from pypads.core.privacy import redact

    array = np.zeros(1000)
    values = [1.5, "text", array, None]
    started = time.perf_counter()
    for _ in range(10_000):
        for value in values:
            redact(value)
    assert (time.perf_counter() - started) / 40_000 < 5e-6  # a fraction of a microsecond here
