"""Ending the runs of an MPI job against a real store: the job's run (rank 0's) ends
FAILED whenever a rank failed, KILLED when ranks were only killed, however the ranks'
ends and the job's interleave."""

from __future__ import annotations

import pytest
from mlflow.tracking import MlflowClient

from pypads.to_mlflow.connection import end_run
from pypads.to_mlflow.connection.runs import MPI_JOB_TAG, MPI_RANK_TAG


class RankEndsBetween(MlflowClient):
    """The job's client: right after the job's end first reads its run, the rank's end
    runs whole (an order in which a launcher's stop can interleave them)."""

    def __init__(self, uri: str, rank_end) -> None:
        super().__init__(uri)
        self._rank_end = rank_end

    def get_run(self, run_id):
        run = super().get_run(run_id)
        rank_end, self._rank_end = self._rank_end, None
        if rank_end is not None:
            rank_end()
        return run


def job_and_rank(store_uri: str) -> tuple[MlflowClient, str, str]:
    client = MlflowClient(store_uri)
    experiment = client.create_experiment("job")
    job = client.create_run(experiment, tags={MPI_JOB_TAG: "digest"}).info.run_id
    rank = client.create_run(experiment, tags={"mlflow.parentRunId": job, MPI_RANK_TAG: "2"}).info.run_id
    return client, job, rank


@pytest.mark.parametrize("rank_status, job_given, job_ends", [
    ("FAILED", "KILLED", "FAILED"),  # a rank failed, the launcher then stopped rank 0
    ("KILLED", "KILLED", "KILLED"),  # the whole job cancelled
    ("KILLED", "FINISHED", "KILLED"),  # one rank killed, rank 0 done
])
def test_a_rank_ending_while_the_job_ends_sets_the_jobs_status(store_uri, rank_status, job_given, job_ends):
    client, job, rank = job_and_rank(store_uri)
    rank_end = lambda: end_run(client, rank, rank_status, mpi=True)  # noqa: E731
    end_run(RankEndsBetween(store_uri, rank_end), job, job_given, mpi=True)
    assert client.get_run(rank).info.status == rank_status
    assert client.get_run(job).data.tags["pypads.failure.rank-2"] == rank_status
    assert client.get_run(job).info.status == job_ends


@pytest.mark.parametrize("rank_status, job_ends", [("FAILED", "FAILED"), ("KILLED", "KILLED")])
def test_a_rank_ending_after_the_job_ended_sets_the_jobs_status(store_uri, rank_status, job_ends):
    client, job, rank = job_and_rank(store_uri)
    end_run(client, job, "FINISHED", mpi=True)
    end_run(client, rank, rank_status, mpi=True)
    assert client.get_run(job).info.status == job_ends
