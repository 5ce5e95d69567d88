"""The claim a script sends a spare uploader: what it carries, and what is not a claim."""

from __future__ import annotations

import json
import os
import socket
import sys

import pytest

from pypads.errors import ConfigError
from pypads.link.spare import uploader_idle
from pypads.uploader.spare import encode_claim, read_claim, release, spare_key

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
