"""Opening and ending MLflow runs, and the experiments they go in."""

from __future__ import annotations

import re
import time
from pathlib import Path

import mlflow
import mlflow.artifacts
from mlflow.entities import RunStatus
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient
from mlflow.tracking.context import registry as context_registry
from mlflow.utils.mlflow_tags import MLFLOW_PARENT_RUN_ID, MLFLOW_USER

from pypads.to_mlflow.store import RunTarget, Store

# The experiment tag MLflow 3's UI reads for the view an experiment opens in, and the
# value of its model-training ("Machine learning") view; without it, GenAI's.
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
MODEL_TRAINING_KIND = "custom_model_development"


def open_run(target: RunTarget, start_time: int | None = None) -> tuple[MlflowClient, str]:
    """The client and the id of the run to write into: the one to join, or a new run
    in the target's experiment, tagged the way ``mlflow.start_run`` tags it (user — the
    target's pseudonym if it has one —, source, git commit) so the UI shows where it
    came from. ``start_time`` (ms) is when the script started tracking: the run is
    opened later, off the script's thread, and its "Created at" and "Duration" must not
    count that delay.

    The uploader times all of it as one call: an end waits for it at most its timeout
    (an MPI rank's wait for its job's run, or git hanging, included)."""
    client = MlflowClient(target.store.tracking_uri)
    if target.join_run_id is not None:
        return client, target.join_run_id
    experiment_id = ensure_experiment(client, target.store, target.experiment_name)
    tags = context_registry.resolve_tags()
    if target.user is not None:  # a pseudonym (config "pseudonymize"): the tag and the run's user id
        tags[MLFLOW_USER] = target.user
    name = None
    if target.mpi is not None:
        job, rank = target.mpi
        if rank == 0:
            tags[MPI_JOB_TAG] = job
        else:  # a child run of the job's: found by its tag, once rank 0's uploader has made it
            name = f"rank-{rank}"
            tags.update({MLFLOW_PARENT_RUN_ID: _job_run(client, experiment_id, job), MPI_RANK_TAG: str(rank)})
    run = client.create_run(experiment_id, start_time=start_time, tags=tags, run_name=name)
    return client, run.info.run_id


RUNNING = RunStatus.to_string(RunStatus.RUNNING)
# The tag of an MPI job's run (rank 0's), with the job's digest; each other rank's child
# run has its rank; a rank that ended FAILED or KILLED leaves its status on the job's run.
MPI_JOB_TAG = "pypads.mpi.job"
MPI_RANK_TAG = "pypads.mpi.rank"
RANK_FAILURE_TAG = "pypads.failure.rank-"
# How long a rank's uploader looks for rank 0's run: its script starting at the same
# moment, MLflow's import and the run's first upload take seconds, more on a busy host.
RANK_WAIT = 120.0


def _job_run(client: MlflowClient, experiment_id: str, job: str) -> str:
    deadline, pause = time.monotonic() + RANK_WAIT, 0.25
    while True:
        found = client.search_runs([experiment_id], f"tags.`{MPI_JOB_TAG}` = '{job}'", max_results=1,
                                   order_by=["attributes.start_time DESC"])
        if found:
            return str(found[0].info.run_id)
        if time.monotonic() > deadline:
            raise MlflowException(f"the run of rank 0 of this MPI job did not appear within {RANK_WAIT:g} s")
        time.sleep(pause)
        pause = min(2 * pause, 2.0)


def start_fluent_run(run_id: str) -> None:
    """Make ``run_id`` MLflow's active run in the calling thread, so the user's own
    ``mlflow.log_*`` calls there go into it (MLflow keeps one run stack per thread)."""
    mlflow.start_run(run_id=run_id)


def end_fluent_run(run_id: str, status: str) -> bool:
    """End ``run_id`` if it is MLflow's active run in the calling thread."""
    active = mlflow.active_run()
    if active is None or active.info.run_id != run_id:
        return False
    mlflow.end_run(status)
    return True


def ensure_experiment(client: MlflowClient, store: Store, name: str) -> str:
    """The id of experiment ``name``; if new, created with an explicit artifact folder
    and marked as model training, so MLflow's UI opens it in its "Machine learning"
    view rather than the GenAI one (an experiment the user made is left as it is)."""
    experiment = client.get_experiment_by_name(name)
    if experiment is not None:
        return experiment.experiment_id
    location = None
    if store.artifact_root is not None:
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name)
        location = (store.artifact_root / safe).as_uri()
    try:
        return client.create_experiment(name, artifact_location=location,
                                        tags={EXPERIMENT_KIND_TAG: MODEL_TRAINING_KIND})
    except Exception:  # another process created it between our two calls
        experiment = client.get_experiment_by_name(name)
        if experiment is None:
            raise
        return experiment.experiment_id


def end_run(client: MlflowClient, run_id: str, status: str, only_if_running: bool = False, mpi: bool = False) -> None:
    """End ``run_id`` with ``status`` (``only_if_running``: unless it has ended already).

    ``mpi``: the run of a rank of a parallel job. A rank that failed or was killed says
    so on the job's run (rank 0's), which then ends FAILED, or KILLED where no rank
    failed (the whole job cancelled); a rank that ends after the job's run ended sets it so."""
    run = client.get_run(run_id) if mpi or only_if_running else None
    if run is not None and only_if_running and run.info.status != RUNNING:
        return
    tags = run.data.tags if run is not None and mpi else {}
    if MPI_JOB_TAG in tags:
        status = job_status(status, tags)
    client.set_terminated(run_id, status)
    if MPI_JOB_TAG in tags:
        # A rank's end noted between the read above and this end: each side writes, then
        # reads what the other wrote, so one of the two always sees the other.
        settled = job_status(status, client.get_run(run_id).data.tags)
        if settled != status:
            client.set_terminated(run_id, settled)
    job_run = tags.get(MLFLOW_PARENT_RUN_ID)
    if MPI_RANK_TAG in tags and job_run and status in ("FAILED", "KILLED"):
        client.set_tag(job_run, RANK_FAILURE_TAG + tags[MPI_RANK_TAG], status)
        job = client.get_run(job_run)
        settled = job_status(job.info.status, job.data.tags)
        if job.info.status != RUNNING and settled != job.info.status:
            client.set_terminated(job_run, settled)


def job_status(status: str, tags: dict[str, str]) -> str:
    """The status of an MPI job's run that would end with ``status``, given its ranks'
    ends in ``tags``: FAILED if a rank failed; KILLED if one was killed and the job
    would have finished; else ``status``."""
    ends = {value for key, value in tags.items() if key.startswith(RANK_FAILURE_TAG)}
    if "FAILED" in ends:
        return "FAILED"
    if "KILLED" in ends and status == "FINISHED":
        return "KILLED"
    return status


def download_artifacts(uri: str, target: Path, tracking_uri: str | None) -> Path:
    """Download the artifacts at ``uri`` (``runs:/<id>/<path>``) into ``target``."""
    return Path(mlflow.artifacts.download_artifacts(artifact_uri=uri, dst_path=str(target), tracking_uri=tracking_uri))
