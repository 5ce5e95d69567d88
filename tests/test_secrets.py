"""Secrets stay out of what pypads prints, keeps and logs: console warnings, journal
files (owner-only), the salt (owner-only), the command line in system.json, params and env tags."""

from __future__ import annotations

import json
import os
import stat
import sys
import threading
from pathlib import Path

import pytest
from conftest import only_run, run_script

from pypads import privacy
from pypads.privacy import REDACTED, is_secret_name, load_salt, redact_argv, redact_params, redact_text
from pypads.store import Store

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
