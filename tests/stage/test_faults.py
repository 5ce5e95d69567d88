"""Which failures of MLflow's real client the uploader tries again: a server that never
took the request (down, restarting, overloaded), and nothing else, read from what MLflow
3's client raises against real sockets and a real HTTP server."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator

import pytest
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from pypads.to_mlflow.connection import log_datasets, passing_failure


@pytest.fixture(autouse=True)
def few_tries(monkeypatch):
    # MLflow's client reads these at each call; the uploader sets them the same way.
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "5")


def failure_of(url: str) -> BaseException:
    with pytest.raises(Exception) as raised:
        MlflowClient(url).get_experiment("0")
    return raised.value


@pytest.fixture
def answering() -> Iterator[callable]:
    """A real HTTP server on loopback answering every request with a given status and body."""
    servers = []

    def start(status: int, body: str) -> str:
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args: object) -> None:
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_a_server_that_is_not_there_passes():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert passing_failure(failure_of(f"http://127.0.0.1:{port}"))


def test_a_name_not_resolved_passes():  # a server's container restarting
    assert passing_failure(failure_of("http://pypads-no-such-host.invalid:5000"))


@pytest.mark.parametrize("tries", ["0", "1"])  # an answer as it is, and MLflow's client giving up on it
def test_a_server_answering_unavailable_passes(answering, monkeypatch, tries):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", tries)
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR", "0")
    assert passing_failure(failure_of(answering(503, '{"error_code": "TEMPORARILY_UNAVAILABLE", "message": "x"}')))


@pytest.mark.parametrize("status, body", [
    (500, '{"error_code": "INTERNAL_ERROR", "message": "a bug"}'),
    (401, '{"error_code": "UNAUTHENTICATED", "message": "connection refused"}'),  # read by status, not body
    (404, '{"error_code": "RESOURCE_DOES_NOT_EXIST", "message": "no such experiment"}'),
])
def test_any_other_answer_does_not_pass(answering, status, body):
    assert not passing_failure(failure_of(answering(status, body)))


class RacedStore:
    """A store whose first ``log_inputs`` loses the race for a dataset's unique key, in
    the words of a database this machine has no server of (MySQL, SQL Server); the
    PostgreSQL case runs for real in tests/test_team_server.py."""

    def __init__(self, message: str) -> None:
        self.message, self.calls = message, 0

    def log_inputs(self, run_id: str, inputs: list) -> None:
        self.calls += 1
        if self.calls == 1:
            raise MlflowException(self.message, error_code="BAD_REQUEST")


@pytest.mark.parametrize("message", [
    "(psycopg2.errors.UniqueViolation) duplicate key value violates unique constraint \"dataset_pk\"",
    "(pymysql.err.IntegrityError) (1062, \"Duplicate entry '1-truth-aa51' for key 'datasets.PRIMARY'\")",
    "Violation of PRIMARY KEY constraint. Violation of UNIQUE KEY constraint 'dataset_pk'.",
])
def test_a_dataset_lost_to_another_scripts_insert_is_logged_again_and_linked(message):
    store, warned = RacedStore(message), []
    log_datasets(store, "run", [{"name": "truth", "digest": "aa51", "context": "training"}],
                 lambda key, text: warned.append(text))
    assert store.calls == 2 and warned == []


def test_any_other_refusal_of_a_dataset_reaches_the_uploader():
    store = RacedStore("the store is read-only")
    with pytest.raises(MlflowException):
        log_datasets(store, "run", [{"name": "truth", "digest": "aa51", "context": "training"}], lambda key, text: None)
    assert store.calls == 1
