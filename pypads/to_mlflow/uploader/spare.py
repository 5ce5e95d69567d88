"""Spare uploaders: an uploader process whose run has ended waits a while for the next
script's run, with MLflow imported and its store open.

Starting an uploader costs seconds a short script cannot hide: Python and pypads, then
``import mlflow`` (1.4 s here) and the store's first use (0.7 s), so a two-second script
would wait at its end for a run that opened after its last line. The next script that
starts within ``idle`` seconds (``uploader_idle``) claims the spare instead and its run
opens at once. A compiler daemon or a build server makes the same trade.

Who may claim which spare: one Unix socket per interpreter, pypads install and import
path (:func:`spare_key`), in a folder only its user may enter (:func:`spare_folder`).
A claim carries what the uploader would have been started with: its arguments, the
script's ``sys.path``, working folder, environment and, as a passed descriptor, its
stderr. The spare takes them over, or answers no when it is stale (pypads' files or
MLflow changed since it started, the run's SQLite store is one it used that was since
removed or replaced) and ends; the script then starts an uploader of its own, as it does when no spare waits.

The wire between them (4-byte length, JSON claim; ``ok <pid>`` or ``no``) is the
uploader's command line done over a socket; after ``ok`` the socket carries
:mod:`pypads.to_mlflow.wire` both ways, as the uploader's stdin and stdout would.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pypads.to_mlflow.uploader.staleness import stale

# Seconds a script waits for a spare to answer its claim before starting an uploader of
# its own; a spare reads a claim within the same bound. A spare answers in milliseconds:
# only one that is stopped (SIGSTOP, swapped out) costs this.
CLAIM_WAIT = 1.0
MOST_CLAIM_BYTES = 4 << 20  # an environment and sys.path: far less
# A spare serves this many runs, then ends: what one run leaves behind never adds up.
MOST_RUNS = 100


def spare_folder(create: bool = False) -> Path | None:
    """The folder of this user's spare uploaders' sockets, ``<tmp>/pypads-<uid>``; None
    where it is not safe to use (not a folder of this user's alone: a socket planted
    there would receive the script's environment) or Unix sockets are not available."""
    if not hasattr(socket, "AF_UNIX") or not hasattr(socket, "send_fds") or not hasattr(os, "getuid"):
        return None
    folder = Path(tempfile.gettempdir()) / f"pypads-{os.getuid()}"
    if create:
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            pass
        except OSError:
            return None
    try:
        info = os.lstat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    return folder


def spare_key(path: list[str]) -> str:
    """Which spares a script with import path ``path`` may claim: those of the same
    interpreter and pypads, whose MLflow came from the same path. The script's own
    folder (``path[0]``) is left out: the spare has imported nothing from it."""
    identity = json.dumps([sys.executable, str(Path(__file__).resolve().parents[2]), path[1:]])
    return hashlib.sha256(identity.encode()).hexdigest()[:16]  # a socket's path has at most 107 bytes


@dataclass
class Claim:
    """A script's claim on a spare: what the uploader is to serve, and the script's
    side of things to take over."""

    argv: list[str]
    sys_path: list[str]
    cwd: str
    environ: dict[str, str]
    connection: socket.socket
    stderr: int | None  # the script's stderr, passed over the socket


def encode_claim(argv: list[str]) -> bytes:
    """The script's claim: the uploader's arguments and the script's surroundings."""
    payload = json.dumps({"argv": argv, "sys_path": sys.path, "cwd": os.getcwd(), "environ": dict(os.environ)}).encode()
    return len(payload).to_bytes(4, "big") + payload


def read_claim(connection: socket.socket) -> Claim | None:
    """The claim sent on ``connection``; None for anything that is not one."""
    connection.settimeout(CLAIM_WAIT)
    data, descriptors = b"", list[int]()
    try:
        data, descriptors, _, _ = socket.recv_fds(connection, 1 << 16, 1)
        while len(data) >= 4 and len(data) < 4 + int.from_bytes(data[:4], "big") <= MOST_CLAIM_BYTES:
            more = connection.recv(1 << 16)
            if not more:
                break
            data += more
    except OSError:
        data = b""  # cut short: not a claim
    stderr = descriptors[0] if descriptors else None
    fields = _claim_fields(data)
    if fields is None:
        if stderr is not None:
            os.close(stderr)
        return None
    return Claim(**fields, connection=connection, stderr=stderr)


def _claim_fields(data: bytes) -> dict[str, Any] | None:
    if len(data) < 4 or len(data) != 4 + int.from_bytes(data[:4], "big"):
        return None
    try:
        fields: Any = json.loads(data[4:])
    except ValueError:
        return None
    strings = (isinstance(fields, dict) and isinstance(fields.get("cwd"), str)
               and all(isinstance(fields.get(key), list) and all(isinstance(item, str) for item in fields[key])
                       for key in ("argv", "sys_path"))
               and isinstance(fields.get("environ"), dict)
               and all(isinstance(key, str) and isinstance(value, str) for key, value in fields["environ"].items()))
    if not strings or set(fields) != {"argv", "sys_path", "cwd", "environ"}:
        return None
    checked: dict[str, Any] = fields
    return checked


class Listener:
    """The spare's socket, named by its key; gone with the spare."""

    def __init__(self, folder: Path, key: str) -> None:
        self.path = folder / f"{key}.sock"
        staging = folder / f".{os.getpid()}.sock"
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            staging.unlink(missing_ok=True)
            self.socket.bind(str(staging))
            self.socket.listen(8)
            # In place at once: a script never finds a name without a listener behind it
            # (but a spare's that has just ended), and a newer spare takes the name over.
            os.replace(staging, self.path)
            self._identity = os.stat(self.path).st_ino
        except OSError:
            self.socket.close()
            raise

    def still_ours(self) -> bool:
        try:
            return os.stat(self.path).st_ino == self._identity
        except OSError:
            return False

    def close(self) -> None:
        if self.still_ours():
            self.path.unlink(missing_ok=True)
        self.socket.close()


def wait_for_claim(idle: float, sqlite_files: dict[str, tuple[int, int]]) -> Claim | None:
    """Wait up to ``idle`` seconds for a script to claim this process; None if none did,
    or this spare is stale or displaced (then it ends)."""
    folder = spare_folder(create=True)
    if folder is None:
        return None
    try:
        listener = Listener(folder, spare_key(sys.path))
    except OSError:
        return None
    deadline = time.monotonic() + idle
    try:
        while (left := deadline - time.monotonic()) > 0:
            listener.socket.settimeout(min(left, 1.0))
            try:
                connection, _ = listener.socket.accept()
            except TimeoutError:
                if not listener.still_ours():  # a newer spare took the name
                    return None
                continue
            except OSError:
                return None
            claim = read_claim(connection)
            if claim is None:
                connection.close()
                continue
            reason = stale(sqlite_files, claim.argv[0] if claim.argv else "", claim.cwd)
            _answer(connection, b"no\n" if reason else f"ok {os.getpid()}\n".encode())
            if reason:
                release(claim)
                return None
            connection.settimeout(None)
            return claim
        return None
    finally:
        listener.close()


def _answer(connection: socket.socket, answer: bytes) -> None:
    try:
        connection.sendall(answer)
    except OSError:
        pass


def release(claim: Claim) -> None:
    claim.connection.close()
    if claim.stderr is not None:
        os.close(claim.stderr)


def take_over(claim: Claim) -> None:
    """Become what a fresh uploader of the claiming script would be: its working folder,
    environment, import path and stderr (what MLflow prints goes where the script's does)."""
    try:
        os.chdir(claim.cwd)
    except OSError:
        pass  # a folder removed since: the run's tags say where the script ran, not this
    os.environ.clear()
    os.environ.update(claim.environ)
    sys.path[:] = claim.sys_path
    if claim.stderr is not None:
        # Both: a fresh uploader's stdout is a copy of the script's stderr too.
        os.dup2(claim.stderr, 1)
        os.dup2(claim.stderr, 2)
        os.close(claim.stderr)
