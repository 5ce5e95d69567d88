"""Real servers for the tests: a PostgreSQL cluster of its own and ``mlflow server``.

PostgreSQL comes from Debian's packages (``python3 dev.py`` installs ``postgresql-15``
where it can). Its server refuses to run as root, so under root the cluster belongs to
the ``postgres`` user, in a folder of its own that user can enter (pytest's ``tmp_path``
is root's alone).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path


class ServerUnavailable(RuntimeError):
    """A server this machine cannot run (PostgreSQL not installed) or that did not come up."""

# Where Debian puts each major version's programs; PATH is tried first.
POSTGRES_PROGRAMS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def postgres_program(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for folder in POSTGRES_PROGRAMS:
        if (folder / name).exists():
            return str(folder / name)
    return None


def _as_owner(command: list[str]) -> list[str]:
    """``command`` as the unprivileged user that owns the cluster (PostgreSQL refuses root)."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@contextlib.contextmanager
def postgres_cluster() -> Iterator[str]:
    """A fresh PostgreSQL cluster on loopback with a database ``mlflow``; yields its URI
    for SQLAlchemy's psycopg2 driver (SQLAlchemy 2.1 would pick psycopg 3 for a bare
    ``postgresql://``). :class:`ServerUnavailable` where PostgreSQL is not installed."""
    initdb, pg_ctl = postgres_program("initdb"), postgres_program("pg_ctl")
    if not (initdb and pg_ctl):
        raise ServerUnavailable("PostgreSQL is not installed (Debian: apt-get install postgresql; "
                                "`python3 dev.py` does it as root)")
    folder = Path(tempfile.mkdtemp(prefix="pypads-postgres-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
    data, port = folder / "data", free_port()
    subprocess.run(_as_owner([initdb, "-D", str(data), "-A", "trust", "-U", "mlflow", "-E", "UTF8", "--no-sync"]),
                   check=True, capture_output=True)
    # fsync off: the cluster lives as long as the test session, and durability is not tested.
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {folder} -c fsync=off -c max_connections=200"
    subprocess.run(_as_owner([pg_ctl, "-D", str(data), "-l", str(folder / "log"), "-w", "-t", "60", "-o", options,
                              "start"]), check=True, capture_output=True)
    try:
        subprocess.run(_as_owner([postgres_program("createdb") or "createdb", "-h", "127.0.0.1", "-p", str(port),
                                  "-U", "mlflow", "mlflow"]), check=True, capture_output=True)
        yield f"postgresql+psycopg2://mlflow@127.0.0.1:{port}/mlflow"
    finally:
        subprocess.run(_as_owner([pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"]), capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


class MlflowServer:
    """``mlflow server`` on loopback over ``backend``, its artifacts proxied by it
    (``mlflow-artifacts:`` URIs) into ``folder``; it can be stopped and started again on
    the same port, as a team's server restarts."""

    def __init__(self, backend: str, folder: Path, port: int | None = None, workers: int = 1) -> None:
        self.backend, self.folder, self.workers = backend, folder, workers
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.artifacts = folder / "served-artifacts"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 180) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", self.backend, "--serve-artifacts",
             "--artifacts-destination", str(self.artifacts), "--host", "127.0.0.1", "--port", str(self.port),
             "--workers", str(self.workers)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true"},
            start_new_session=True,  # its uvicorn workers and job runners go with it on stop()
        )
        deadline = time.monotonic() + timeout
        while True:
            try:
                urllib.request.urlopen(f"{self.url}/health", timeout=2)
                return
            except OSError:
                if time.monotonic() > deadline or self._process.poll() is not None:
                    self.stop()
                    raise ServerUnavailable(f"mlflow server over {self.backend} did not come up within {timeout:.0f} s") from None
                time.sleep(0.5)

    def stop(self) -> None:
        """Stop the server and every process it started (``mlflow server`` is a parent
        of uvicorn's workers: killing it alone would leave them answering)."""
        if self._process is None:
            return
        group = self._process.pid  # its own session: the group's id is its pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGTERM)
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)  # whatever of the group is left
        self._process.wait()
        self._process = None


@contextlib.contextmanager
def mlflow_server(backend: str, folder: Path, port: int | None = None, workers: int = 1) -> Iterator[MlflowServer]:
    server = MlflowServer(backend, folder, port, workers)
    server.start()
    try:
        yield server
    finally:
        server.stop()
