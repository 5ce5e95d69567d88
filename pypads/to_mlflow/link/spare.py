"""The script's side of a spare uploader (see :mod:`pypads.to_mlflow.uploader.spare`): claim one
if one waits, and talk to it as to an uploader process of its own."""

from __future__ import annotations

import os
import signal
import socket
import sys
from typing import BinaryIO

from pypads.core import ConfigError
from pypads.to_mlflow.uploader.spare import CLAIM_WAIT, encode_claim, spare_folder, spare_key

IDLE_VARIABLE = "PYPADS_UPLOADER_IDLE"
DEFAULT_IDLE = 300.0


def uploader_idle(configured: float | None) -> float:
    """Seconds an uploader waits as a spare after its run: the config's ``uploader_idle``,
    else ``$PYPADS_UPLOADER_IDLE``, else 300. 0: none waits, none is claimed."""
    if configured is not None:
        return float(configured)
    text = os.environ.get(IDLE_VARIABLE, "").strip()
    if not text:
        return DEFAULT_IDLE
    try:
        idle = float(text)
    except ValueError:
        idle = -1.0
    if not 0 <= idle < float("inf"):
        raise ConfigError(f"environment variable {IDLE_VARIABLE}: {text!r} is not a number of seconds (0 or more)")
    return idle


class SpareUploader:
    """A claimed spare uploader: its commands and answers go over the claim's socket."""

    def __init__(self, connection: socket.socket, pid: int) -> None:
        self.pid = pid
        self.stdin: BinaryIO = connection.makefile("wb")
        self.stdout: BinaryIO = connection.makefile("rb")
        self._connection = connection

    def close_input(self) -> None:
        """End the spare's input, as closing a child's stdin does: closing the file
        alone would leave the socket open for the answers' file."""
        try:
            self._connection.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # gone already

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass  # gone already

    def wait(self) -> int | None:
        return None  # not our child: its exit status is not ours to collect


def claim_spare(argv: list[str]) -> SpareUploader | None:
    """A spare uploader that takes ``argv`` (an uploader's arguments) for this script,
    or None if none waits, or none answered within :data:`CLAIM_WAIT` seconds."""
    folder = spare_folder()
    if folder is None:
        return None
    path = folder / f"{spare_key(sys.path)}.sock"
    if not path.exists():  # the usual case after a while: one stat, no socket
        return None
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.settimeout(CLAIM_WAIT)
    try:
        connection.connect(str(path))
        claim = encode_claim(argv)
        sent = socket.send_fds(connection, [claim], [2]) if _is_open(2) else 0
        connection.sendall(claim[sent:])
        answer = _answer_line(connection)
    except OSError:
        connection.close()
        return None
    if not answer.startswith(b"ok ") or not answer[3:].strip().isdigit():
        connection.close()
        return None
    connection.settimeout(None)
    return SpareUploader(connection, int(answer[3:]))


def _is_open(descriptor: int) -> bool:
    try:
        os.fstat(descriptor)
        return True
    except OSError:  # pythonw, or a daemon that closed its stderr
        return False


def _answer_line(connection: socket.socket) -> bytes:
    # Byte by byte: what follows the answer is the uploader's, read by the link.
    line = b""
    while not line.endswith(b"\n") and len(line) < 64:
        byte = connection.recv(1)
        if not byte:
            break
        line += byte
    return line
