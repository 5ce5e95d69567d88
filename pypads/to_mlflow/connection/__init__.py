"""Everything that talks to MLflow: opening the run, writing batches, uploading
artifacts, logging datasets, child runs and models, and ending the run.

Importing MLflow takes about a second and 170 MB, so no module on the script's path
imports this one: the uploader does (through :data:`pypads.to_mlflow.access.mlflow_connection`),
in a process of its own unless the script has imported MLflow itself.
"""

from __future__ import annotations

from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

from pypads.to_mlflow.connection.autolog import enable_autolog
from pypads.to_mlflow.connection.entities import (
    MAX_ENTITIES_PER_BATCH,
    MAX_PARAMS_PER_BATCH,
    MAX_TAGS_PER_BATCH,
    UPLOAD_CHUNK,
    upload_artifacts,
    write_entities,
)
from pypads.to_mlflow.connection.faults import passing_failure
from pypads.to_mlflow.connection.inputs import log_child_runs, log_datasets
from pypads.to_mlflow.connection.models import PICKLE, list_models, log_linked_metrics, log_model
from pypads.to_mlflow.connection.runs import (
    EXPERIMENT_KIND_TAG,
    MODEL_TRAINING_KIND,
    download_artifacts,
    end_fluent_run,
    end_run,
    ensure_experiment,
    open_run,
    start_fluent_run,
)

# MLflow's client and its error, for the floors above that read runs back (the results
# API, the command line): they reach MLflow through this package only.
__all__ = ["EXPERIMENT_KIND_TAG", "MAX_ENTITIES_PER_BATCH", "MAX_PARAMS_PER_BATCH", "MAX_TAGS_PER_BATCH",
           "MODEL_TRAINING_KIND", "PICKLE", "UPLOAD_CHUNK", "MlflowClient", "MlflowException", "download_artifacts",
           "enable_autolog", "end_fluent_run", "end_run", "ensure_experiment",
           "log_child_runs", "log_datasets", "list_models", "log_linked_metrics", "log_model", "open_run", "passing_failure",
           "start_fluent_run", "upload_artifacts", "write_entities"]
