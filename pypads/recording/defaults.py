"""The seed's defaults: which events are on, and which loggers serve them."""

from __future__ import annotations

from typing import Any

from pypads.recording.callmonitor import CallRecorder
from pypads.recording.loggers import (
    Cpu,
    CrossValidation,
    Datasets,
    Disk,
    Input,
    Log,
    LogInit,
    Metric,
    MlflowAutologger,
    Model,
    ModelRuns,
    Output,
    Parameters,
    PipelineTracker,
    Ram,
    Readings,
    Search,
    TrainingScores,
    WriteFormats,
)
from pypads.recording.run_loggers import DEFAULT_INIT_RUN_FNS

DEFAULT_CONFIG: dict[str, Any] = {
    "events": {
        "init": {"on": ["pypads_init"]},
        "parameters": {"on": ["pypads_fit", "pypads_partial_fit"], "depth": 0},
        # What a mapping file says to read of a call: a native train's params, its training curves.
        "readings": {"on": ["pypads_fit", "pypads_cross_validate"], "depth": 0},
        "hardware": {"on": ["pypads_fit"], "depth": 0},
        "output": {"on": ["pypads_fit", "pypads_predict"], "depth": 0},
        "input": {"on": ["pypads_fit"], "with": {"_pypads_write_format": WriteFormats.text.name}, "depth": 0},
        "metric": {"on": ["pypads_metric"]},
        "pipeline": {"on": ["pypads_fit", "pypads_partial_fit", "pypads_predict", "pypads_transform",
                            "pypads_metric", "pypads_cross_validate", "pypads_validate"]},
        "log": {"on": ["pypads_log"]},
        # What a run is about: the fitted model, the data, a search's result, CV scores.
        "model": {"on": ["pypads_fit", "pypads_partial_fit"], "depth": 0},
        "datasets": {"on": ["pypads_fit", "pypads_predict", "pypads_metric", "pypads_cross_validate"], "depth": 0},
        "search": {"on": ["pypads_fit"], "depth": 0},
        "crossval": {"on": ["pypads_cross_validate"], "depth": 0},
        # Each fitted model's scores and pictures on its training data (training_accuracy_score…).
        "training": {"on": ["pypads_fit"], "depth": 0},
        # Two or more models in one script: a child run each, to compare them as rows.
        "comparison": {"on": ["pypads_fit"], "depth": 0},
    },
    "recursion_identity": False,
    "recursion_depth": -1,
    "log_on_failure": True,
    # Loggers switched off by name (event loggers and run loggers alike).
    "disabled": [],
    # Environment variables that may be logged (as tags pypads.env.<NAME>): none by default.
    "env_allowlist": [],
    # Replace hostname, user, IP and MAC address by keyed pseudonyms, for runs to be
    # published (system.json, pypads.host, mlflow.user; not paths: docs/loggers.md).
    "pseudonymize": False,
    # Seconds the end of a run waits for an MLflow call that does not answer; then the
    # data stays in the local journal and the next PyPads() uploads it. None: 5 for a
    # tracking server, 60 for a store on this machine (see uploader.default_timeout).
    "flush_timeout": None,
    # Where the uploader runs: "process" (its own: MLflow never loads into the script),
    # "thread" (of the script), or "auto": a thread if the script has imported MLflow
    # before PyPads() anyway, else a process.
    "uploader": "auto",
    # Seconds an uploader process waits, its run ended, for the next script's run (a
    # spare, with MLflow imported: the next run opens at once). None: $PYPADS_UPLOADER_IDLE,
    # else 300; 0: the uploader ends with its run.
    "uploader_idle": None,
}

# How deeply nested a call each event's loggers see when the config does not say
# ("depth" of an event): 0 for the events that would otherwise add params, system
# metrics and artifact folders for every call scikit-learn makes inside the script's
# own (a forest's trees, a search's candidates); -1 (every depth) for the others.
# Metrics stay at every depth: scores computed inside a library call get series of
# their own (see Metric). "depth": -1 on an event brings back everything.
DEFAULT_EVENT_DEPTHS: dict[str, int] = {"parameters": 0, "readings": 0, "hardware": 0, "output": 0, "input": 0,
                                        "model": 0, "datasets": 0, "search": 0, "crossval": 0,
                                        "comparison": 0, "training": 0}

DEFAULT_LOGGING_FNS: dict[str, Any] = {
    "parameters": Parameters(),
    "readings": Readings(),
    "output": Output(_pypads_write_format=WriteFormats.text.name),
    "input": Input(_pypads_write_format=WriteFormats.text.name),
    "hardware": {Cpu(), Ram(), Disk()},
    "metric": Metric(),
    "log": Log(),
    "autolog": MlflowAutologger(),
    "pipeline": PipelineTracker(_pypads_pipeline_type="normal", _pypads_pipeline_args=False),
    "init": LogInit(),
    "model": Model(),
    "datasets": Datasets(),
    "search": Search(),
    "crossval": CrossValidation(),
    "comparison": ModelRuns(),
    "training": TrainingScores(),
    # Off unless an event names it: config={"events": {"calls": {"on": ["pypads_fit"]}}}
    "calls": CallRecorder(),
}

__all__ = ["DEFAULT_CONFIG", "DEFAULT_EVENT_DEPTHS", "DEFAULT_INIT_RUN_FNS", "DEFAULT_LOGGING_FNS"]
