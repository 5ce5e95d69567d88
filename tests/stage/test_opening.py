"""Opening a run times each request to MLflow on its own: an end that waits on the
uploader's clock must not take local work or an MPI rank's wait for its job's run for a
server that does not answer (the script would give up on a server that is there)."""

from __future__ import annotations

import threading
import time

from mlflow.tracking import MlflowClient

from pypads.to_mlflow.connection import open_run
from pypads.to_mlflow.connection.runs import MPI_JOB_TAG
from pypads.to_mlflow.store import RunTarget, Store
from pypads.to_mlflow.timeouts import AnswerClock


def test_a_rank_waiting_for_its_jobs_run_is_no_call_left_unanswered(tmp_path, store_uri):
    store = Store(store_uri, tmp_path / "artifacts")
    clock = AnswerClock()
    opened: list[tuple[MlflowClient, str]] = []
    rank = threading.Thread(target=lambda: opened.append(open_run(RunTarget(store, "job", mpi=("digest", 1)), clock.call)))
    rank.start()
    # Rank 0's run appears only after three seconds; the end of rank 1's script, waiting
    # with a bound of one second per unanswered call, goes on waiting all along.
    appears = time.monotonic() + 3
    waited = clock.wait(lambda: time.monotonic() > appears, timeout=1.0)
    client = MlflowClient(store_uri)
    job = client.create_run(client.get_experiment_by_name("job").experiment_id, tags={MPI_JOB_TAG: "digest"})
    rank.join(timeout=30)
    assert waited
    (_, run_id), = opened
    child = client.get_run(run_id)
    assert child.data.tags["mlflow.parentRunId"] == job.info.run_id
    assert child.info.run_name == "rank-1"
