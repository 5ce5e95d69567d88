"""The claim a script sends a spare uploader: what it carries, and what is not a claim."""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest

from pypads.core.errors import ConfigError
from pypads.to_mlflow.link.spare import uploader_idle
from pypads.to_mlflow.uploader import staleness
from pypads.to_mlflow.uploader.spare import encode_claim, read_claim, release, spare_key
from pypads.to_mlflow.uploader.staleness import sqlite_identity, stale

pytestmark = pytest.mark.skipif(not hasattr(socket, "send_fds"), reason="claims pass descriptors over Unix sockets")


def test_a_claim_carries_the_arguments_the_surroundings_and_the_stderr():
    script_end, spare_end = socket.socketpair()
    read_end, write_end = os.pipe()
    claim = encode_claim(["/journal", "--interval", "1.0"])
    sent = socket.send_fds(script_end, [claim], [write_end])
    script_end.sendall(claim[sent:])
    received = read_claim(spare_end)
    assert received is not None
    assert received.argv == ["/journal", "--interval", "1.0"]
    assert received.sys_path == sys.path and received.cwd == os.getcwd() and received.environ == dict(os.environ)
    assert received.stderr is not None
    os.write(received.stderr, b"from the spare")  # the script's descriptor, passed over
    assert os.read(read_end, 100) == b"from the spare"
    release(received)
    for descriptor in (read_end, write_end):
        os.close(descriptor)
    script_end.close()


@pytest.mark.parametrize("payload", [
    b"not json at all",
    json.dumps({"argv": "journal", "sys_path": [], "cwd": "/", "environ": {}}).encode(),
    json.dumps({"argv": [], "sys_path": [], "cwd": "/", "environ": {"A": 1}}).encode(),
    json.dumps({"argv": [], "sys_path": [], "cwd": "/", "environ": {}, "extra": True}).encode(),
    json.dumps([1, 2, 3]).encode(),
])
def test_anything_but_a_claim_is_refused(payload):
    script_end, spare_end = socket.socketpair()
    script_end.sendall(len(payload).to_bytes(4, "big") + payload)
    assert read_claim(spare_end) is None
    spare_end.close()
    script_end.close()


def test_a_claim_cut_short_is_refused_within_the_wait():
    script_end, spare_end = socket.socketpair()
    script_end.sendall((1000).to_bytes(4, "big") + b"{")
    script_end.close()
    assert read_claim(spare_end) is None
    spare_end.close()


def test_the_key_leaves_out_the_scripts_own_folder_but_not_the_rest_of_the_path():
    assert spare_key(["/project/a", "/site-packages"]) == spare_key(["/project/b", "/site-packages"])
    assert spare_key(["/project/a", "/site-packages"]) != spare_key(["/project/a", "/other/site-packages"])


def test_idle_from_the_config_the_variable_or_the_default(monkeypatch):
    monkeypatch.setenv("PYPADS_UPLOADER_IDLE", "12.5")
    assert uploader_idle(None) == 12.5
    assert uploader_idle(0) == 0
    monkeypatch.delenv("PYPADS_UPLOADER_IDLE")
    assert uploader_idle(None) == 300
    for bad in ("-1", "inf", "nan", "soon"):
        monkeypatch.setenv("PYPADS_UPLOADER_IDLE", bad)
        with pytest.raises(ConfigError, match="PYPADS_UPLOADER_IDLE"):
            uploader_idle(None)


def _journal(journal: Path, tracking_uri: str) -> str:
    journal.mkdir()
    (journal / "meta.json").write_text(json.dumps({"tracking_uri": tracking_uri}))
    return journal.name  # relative to the claiming script's folder


def test_a_spare_refuses_a_run_into_a_sqlite_store_it_used_that_was_replaced(tmp_path):
    database = tmp_path / "mlflow.db"
    database.write_bytes(b"first")
    used = dict([sqlite_identity(f"sqlite:///{database}")])
    journal = _journal(tmp_path / "journal", f"sqlite:///{database}")
    assert stale(used, journal, str(tmp_path)) is None
    with open(database, "rb"):  # as MLflow's pooled connection keeps it
        database.unlink()
        database.write_bytes(b"second")  # a new file where the old one was, perhaps with its inode number
        assert stale(used, journal, str(tmp_path)) == f"{database} was replaced"
    database.unlink()
    assert stale(used, journal, str(tmp_path)) == f"{database} is gone"
    other = _journal(tmp_path / "other-journal", f"sqlite:///{tmp_path / 'other.db'}")
    assert stale(used, other, str(tmp_path)) is None  # another store: MLflow opens it afresh


def test_a_spare_started_before_pypads_changed_refuses(tmp_path, monkeypatch):
    journal = _journal(tmp_path / "journal", "http://127.0.0.1:5000")
    assert stale({}, journal, str(tmp_path)) is None
    monkeypatch.setattr(staleness, "_STARTED", 0.0)  # as if every pypads file changed since it started
    assert stale({}, journal, str(tmp_path)).endswith(" changed")
