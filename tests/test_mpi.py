"""MPI: ``mpirun -n 4 python train.py`` with ``PyPads()`` at its top gives one run. Rank
0's is the job's run; each other rank's calls land in a child run of it, ``rank-<k>``,
tagged with its rank. Under a real ``mpirun`` (Open MPI from Debian's packages)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time

import pytest
from conftest import RunView, script_environment, store_of
from mlflow.tracking import MlflowClient

pytestmark = [
    pytest.mark.skipif(shutil.which("mpirun") is None,
                       reason="no MPI runtime (Debian: apt-get install openmpi-bin; `python3 dev.py` does it as root)"),
    pytest.mark.newest_only,
]

TRAIN = """
import os, pathlib, time
from pypads import PyPads
tracker = PyPads(name="mpi-train")
from sklearn import datasets
from sklearn.linear_model import Ridge
rank, size = int(os.environ["OMPI_COMM_WORLD_RANK"]), int(os.environ["OMPI_COMM_WORLD_SIZE"])
X, y = datasets.load_diabetes(return_X_y=True)
Ridge(alpha=rank + 1.0).fit(X, y)
pathlib.Path(f"fitted-{rank}").touch()
if rank == int(os.environ.get("FAILING_RANK", "-1")):
    # After every rank has fitted (a barrier without mpi4py): the launcher then stops
    # the others, and what each logged must be there all the same.
    deadline = time.monotonic() + 120
    while len(list(pathlib.Path().glob("fitted-*"))) < size and time.monotonic() < deadline:
        time.sleep(0.05)
    raise RuntimeError("rank failed")
"""


def mpirun(tmp_path, home_with_store, ranks: int, **extra: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "train.py").write_text(TRAIN)
    # Open MPI refuses root unless told twice; CI runs as root.
    environment = {**script_environment(tmp_path), "OMPI_ALLOW_RUN_AS_ROOT": "1",
                   "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", **extra}
    return subprocess.run(["mpirun", "-n", str(ranks), "--oversubscribe", sys.executable, str(tmp_path / "train.py")],
                          cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300)


def job_runs(uri: str, ranks: int, timeout: float = 120) -> tuple[RunView, dict[int, RunView]]:
    """The job's run and its ranks' child runs, once all of them have ended."""
    client = MlflowClient(uri)
    deadline = time.monotonic() + timeout
    while True:
        experiment = client.get_experiment_by_name("mpi-train")
        runs = client.search_runs([experiment.experiment_id]) if experiment else []
        if len(runs) == ranks and all(run.info.status != "RUNNING" for run in runs) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    top = [run for run in runs if "mlflow.parentRunId" not in run.data.tags]
    assert len(top) == 1, f"{len(top)} top-level runs of {len(runs)}"
    children = {int(run.data.tags["pypads.mpi.rank"]): RunView(uri, run.info.run_id) for run in runs if run not in top}
    assert all(child.tags["mlflow.parentRunId"] == top[0].info.run_id for child in children.values())
    return RunView(uri, top[0].info.run_id), children


def test_four_ranks_make_one_run_with_a_child_run_per_other_rank(tmp_path, home_with_store):
    result = mpirun(tmp_path, home_with_store, 4)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr == ""  # nothing of pypads' in any rank's output
    job, ranks = job_runs(store_of(tmp_path), 4)
    assert job.status == "FINISHED" and "pypads.mpi.job" in job.tags
    assert job.params["Ridge.alpha"] == "1.0"
    assert sorted(ranks) == [1, 2, 3]
    for rank, run in ranks.items():
        assert run.run.info.run_name == f"rank-{rank}" and run.status == "FINISHED"
        assert run.params["Ridge.alpha"] == f"{rank + 1.0}"
        assert "calls/Ridge.fit.jsonl" in run.artifacts("calls")


def test_a_rank_that_fails_leaves_the_others_data_and_fails_the_run(tmp_path, home_with_store):
    result = mpirun(tmp_path, home_with_store, 4, FAILING_RANK="2")
    assert result.returncode != 0
    job, ranks = job_runs(store_of(tmp_path), 4)
    assert job.status == "FAILED" and job.tags["pypads.failure.rank-2"] == "FAILED"
    assert ranks[2].status == "FAILED"
    assert {rank: run.params["Ridge.alpha"] for rank, run in ranks.items()} == {1: "2.0", 2: "3.0", 3: "4.0"}
