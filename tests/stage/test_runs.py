"""Opening and ending runs against a real store: opening times each request to MLflow
on its own (an end that waits on the uploader's clock must not take local work or an
MPI rank's wait for its job's run for a server that does not answer), and an MPI job's
run ends FAILED whenever one of its ranks failed, however their ends interleave."""

from __future__ import annotations

import threading
import time

from mlflow.tracking import MlflowClient

from pypads.to_mlflow.connection import end_run, open_run
from pypads.to_mlflow.connection.runs import MPI_JOB_TAG, MPI_RANK_TAG
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


class RankEndsBetween(MlflowClient):
    """The job's client: right after the job's end first reads its run, the failing
    rank's end runs whole (the order in which the launcher's stop can interleave them)."""

    def __init__(self, uri: str, rank_end) -> None:
        super().__init__(uri)
        self._rank_end = rank_end

    def get_run(self, run_id):
        run = super().get_run(run_id)
        rank_end, self._rank_end = self._rank_end, None
        if rank_end is not None:
            rank_end()
        return run


def test_a_job_ends_failed_when_its_rank_fails_while_the_job_ends(store_uri):
    client = MlflowClient(store_uri)
    experiment = client.create_experiment("job")
    job = client.create_run(experiment, tags={MPI_JOB_TAG: "digest"}).info.run_id
    rank = client.create_run(experiment, tags={"mlflow.parentRunId": job, MPI_RANK_TAG: "2"}).info.run_id
    failing_rank = lambda: end_run(client, rank, "FAILED", mpi=True)  # noqa: E731
    end_run(RankEndsBetween(store_uri, failing_rank), job, "KILLED", mpi=True)  # the launcher stopped rank 0
    assert client.get_run(rank).info.status == "FAILED"
    assert client.get_run(job).data.tags["pypads.failure.rank-2"] == "FAILED"
    assert client.get_run(job).info.status == "FAILED"
