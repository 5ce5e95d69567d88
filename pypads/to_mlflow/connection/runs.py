"""Opening and ending MLflow runs, and the experiments they go in."""

from __future__ import annotations

import re
from pathlib import Path

import mlflow
import mlflow.artifacts
from mlflow.entities import RunStatus
from mlflow.tracking import MlflowClient
from mlflow.tracking.context import registry as context_registry
from mlflow.utils.mlflow_tags import MLFLOW_USER

from pypads.to_mlflow.store import RunTarget, Store

# The experiment tag MLflow 3's UI reads for the view an experiment opens in, and the
# value of its model-training ("Machine learning") view; without it, GenAI's.
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
MODEL_TRAINING_KIND = "custom_model_development"


def open_run(target: RunTarget, start_time: int | None = None) -> tuple[MlflowClient, str]:
    """The client and the id of the run to write into: the one to join, or a new run
    in the target's experiment, tagged the way ``mlflow.start_run`` tags it (user — the
    target's pseudonym if it has one —, source, git commit) so the UI shows where it came from. ``start_time`` (ms) is when
    the script started tracking: the run is opened later, off the script's thread, and
    its "Created at" and "Duration" must not count that delay."""
    client = MlflowClient(target.store.tracking_uri)
    if target.join_run_id is not None:
        return client, target.join_run_id
    experiment_id = ensure_experiment(client, target.store, target.experiment_name)
    tags = context_registry.resolve_tags()
    if target.user is not None:  # a pseudonym (config "pseudonymize"): the tag and the run's user id
        tags[MLFLOW_USER] = target.user
    run = client.create_run(experiment_id, start_time=start_time, tags=tags)
    return client, run.info.run_id


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


def end_run(client: MlflowClient, run_id: str, status: str, only_if_running: bool = False) -> None:
    """End ``run_id`` with ``status`` (``only_if_running``: unless it has ended already)."""
    if only_if_running and client.get_run(run_id).info.status != RunStatus.to_string(RunStatus.RUNNING):
        return
    client.set_terminated(run_id, status)


def download_artifacts(uri: str, target: Path, tracking_uri: str | None) -> Path:
    """Download the artifacts at ``uri`` (``runs:/<id>/<path>``) into ``target``."""
    return Path(mlflow.artifacts.download_artifacts(artifact_uri=uri, dst_path=str(target), tracking_uri=tracking_uri))
