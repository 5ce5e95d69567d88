"""Which parallel job a process is a rank of, read from what its launcher set."""

from __future__ import annotations

import pytest

from pypads.core import launcher_job, launcher_rank
from pypads.to_mlflow.journal.format import run_target

LAUNCHERS = ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "OMPI_MCA_orte_hnp_uri",
             "PMIX_NAMESPACE")


@pytest.fixture(autouse=True)
def no_launcher(monkeypatch):
    for name in LAUNCHERS:
        monkeypatch.delenv(name, raising=False)


def as_rank(monkeypatch, rank: str, size: str, launcher: str = "1085734912.0;tcp://10.0.0.1:33791") -> None:
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", rank)
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", size)
    monkeypatch.setenv("OMPI_MCA_orte_hnp_uri", launcher)


def test_a_rank_of_a_job_of_four_knows_its_rank_and_its_jobs_digest(monkeypatch):
    as_rank(monkeypatch, "2", "4")
    job, rank = launcher_job()
    as_rank(monkeypatch, "0", "4")
    assert launcher_job() == (job, 0) and rank == 2 and launcher_rank() == 0
    as_rank(monkeypatch, "0", "4", launcher="1085734999.0;tcp://10.0.0.1:40000")  # another mpirun
    assert launcher_job()[0] != job


@pytest.mark.parametrize("rank, size", [("0", "1"), ("x", "4"), ("", ""), ("-1", "4")])
def test_no_job_of_more_than_one_process_is_no_rank(monkeypatch, rank, size):
    as_rank(monkeypatch, rank, size)
    assert launcher_rank() is None and launcher_job() is None


def test_a_launcher_that_names_no_job_gives_a_rank_but_no_job(monkeypatch):
    monkeypatch.setenv("PMI_RANK", "1")
    monkeypatch.setenv("PMI_SIZE", "2")
    assert launcher_rank() == 1 and launcher_job() is None


@pytest.mark.parametrize("value, taken", [(["abc", 1], ("abc", 1)), (None, None), (["abc"], None), (["abc", "1"], None),
                                          ([1, 1], None), (["abc", True], None), ("abc", None), ({"a": 1}, None)])
def test_a_journals_mpi_field_is_taken_only_as_pypads_writes_it(value, taken):
    meta = {"tracking_uri": "sqlite:///x.db", "experiment": "e", "mpi": value}
    assert run_target(meta).mpi == taken


def test_a_slurm_batch_script_of_four_tasks_is_one_process(monkeypatch):
    for name, value in (("SLURM_PROCID", "0"), ("SLURM_NTASKS", "4"), ("SLURM_JOB_ID", "77")):
        monkeypatch.setenv(name, value)
    assert launcher_rank() is None and launcher_job() is None
