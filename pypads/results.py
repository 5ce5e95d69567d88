"""A tracked run's contents as pandas DataFrames, for a notebook after the run.

    from pypads import results
    results.runs(experiment="train")             # recent runs, newest first
    results.params(run_id)                       # key, value
    results.metrics(run_id)                      # key, step, value, timestamp
    results.datasets(run_id)                     # the run's dataset inputs
    results.calls(run_id)                        # the call database, a row per call
    results.pipeline(run_id)                     # the pipeline's calls, a row per call
    results.system(run_id)                       # the machine it ran on, a dict
    results.run_info(run_id)                     # status, times, tags, parent and child runs, a dict
    results.models(run_id)                       # the run's logged models
    results.diff(run_a, run_b)                   # what changed between two runs, a dict

Every function reads the store ``PyPads(uri=uri)`` would track into: ``uri``, else
``$MLFLOW_TRACKING_URI``, else ``$MLFLOW_PATH``, else the store in ``$PYPADS_HOME``
(``~/.pypads``). Unlike ``import pypads``, this module imports MLflow and pandas.
A run, experiment or artifact that is not there is one :class:`ResultsError`.
"""

from __future__ import annotations

import json
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from pypads.core import ResultsError
from pypads.run_diff import compare_runs
from pypads.to_mlflow import mlflow_connection, resolve_store

__all__ = ["ResultsError", "calls", "datasets", "diff", "metrics", "models", "params", "pipeline", "pipeline_edges",
           "run_info", "runs", "system"]

PIPELINE_GRAPH = "pipeline/graph.json"
SYSTEM_JSON = "environment/system.json"
RUN_COLUMNS = ["run_id", "run_name", "experiment", "status", "start_time", "end_time"]


def runs(experiment: str | None = None, max_results: int = 100, uri: str | None = None) -> pd.DataFrame:
    """The most recent runs, newest first, in the manner of ``mlflow.search_runs``.

    Args:
        experiment: an experiment's name; by default runs of every experiment.
        max_results: at most this many runs.
        uri: the store (see the module's doc).

    Returns:
        One row per run: ``run_id``, ``run_name``, ``experiment``, ``status``,
        ``start_time``, ``end_time`` (local time; ``NaT`` while running), then
        a ``metrics.<key>`` column per metric (latest value) and ``params.<key>`` per
        param; a run without one has NaN or ``None`` there.
    """
    client = _client(uri)
    experiments = {found.experiment_id: found.name for found in client.search_experiments()}
    if experiment is not None:
        chosen = client.get_experiment_by_name(experiment)
        if chosen is None:
            known = ", ".join(sorted(map(repr, experiments.values()))) or "none"
            raise ResultsError(f"no experiment {experiment!r} in {_shown(uri)} (experiments: {known})")
        experiments = {chosen.experiment_id: chosen.name}
    if not experiments:
        return pd.DataFrame(columns=RUN_COLUMNS)
    found = client.search_runs(list(experiments), max_results=max_results, order_by=["attributes.start_time DESC"])
    rows = [{"run_id": run.info.run_id, "run_name": run.info.run_name,
             "experiment": experiments.get(run.info.experiment_id, run.info.experiment_id),
             "status": run.info.status, "start_time": _time(run.info.start_time),
             "end_time": _time(run.info.end_time),
             **{f"metrics.{key}": value for key, value in sorted(run.data.metrics.items())},
             **{f"params.{key}": value for key, value in sorted(run.data.params.items())}}
            for run in found]
    return pd.DataFrame(rows) if rows else pd.DataFrame(columns=RUN_COLUMNS)


def run_info(run_id: str, uri: str | None = None) -> dict[str, Any]:
    """One run's facts: ``run_id``, ``run_name``, ``experiment``, ``status``,
    ``start_time``, ``end_time`` (local ``datetime``, ``None`` while running),
    ``duration`` (seconds, ``None`` while running), ``user`` (MLflow's ``mlflow.user``),
    ``tags`` (a dict), ``parent_run_id`` (``None`` for a top-level run) and
    ``child_runs`` (a list of ``(run_id, run_name)``: the models it compares, a search's
    candidates)."""
    client = _client(uri)
    run = _run(client, run_id, uri)
    experiment = client.get_experiment(run.info.experiment_id)
    children = client.search_runs([run.info.experiment_id], filter_string=f"tags.`mlflow.parentRunId` = '{run_id}'",
                                  max_results=1000, order_by=["attributes.start_time ASC"])
    start, end = run.info.start_time, run.info.end_time
    return {
        "run_id": run.info.run_id, "run_name": run.info.run_name,
        "experiment": experiment.name if experiment is not None else run.info.experiment_id,
        "status": run.info.status, "start_time": _time(start), "end_time": _time(end),
        "duration": (end - start) / 1000 if start and end else None,
        "user": run.data.tags.get("mlflow.user"), "tags": dict(run.data.tags),
        "parent_run_id": run.data.tags.get("mlflow.parentRunId"),
        "child_runs": [(child.info.run_id, child.info.run_name) for child in children],
    }


def models(run_id: str, uri: str | None = None) -> pd.DataFrame:
    """The run's logged models (the ``Model`` logger's, MLflow's autolog's): rows of
    ``name``, ``model_id``, ``status`` and ``source_run_id`` (a child run when the run
    compares models), in the order they were logged."""
    client = _client(uri)
    run = _run(client, run_id, uri)
    outputs = run.outputs.model_outputs if run.outputs is not None else []
    rows = []
    for output in outputs:
        try:
            model = client.get_logged_model(output.model_id)
        except mlflow_connection.MlflowException:  # deleted since
            continue
        rows.append((model.name, model.model_id, str(model.status), model.source_run_id))
    return pd.DataFrame(rows, columns=["name", "model_id", "status", "source_run_id"])


def params(run_id: str, uri: str | None = None) -> pd.DataFrame:
    """The run's params (``DecisionTreeClassifier.max_depth`` and friends) as rows of
    ``key``, ``value`` (MLflow keeps params as text), sorted by key."""
    run = _run(_client(uri), run_id, uri)
    rows = sorted(run.data.params.items())
    return pd.DataFrame(rows, columns=["key", "value"])


def metrics(run_id: str, uri: str | None = None) -> pd.DataFrame:
    """Every value of every metric of the run, steps included (a search's folds, a
    series over epochs): rows of ``key``, ``step``, ``value``, ``timestamp`` (local
    ``datetime``), sorted by key, step and time. System metrics (``system/…``) too."""
    client = _client(uri)
    run = _run(client, run_id, uri)
    rows = [(key, point.step, point.value, _time(point.timestamp))
            for key in sorted(run.data.metrics) for point in client.get_metric_history(run_id, key)]
    frame = pd.DataFrame(rows, columns=["key", "step", "value", "timestamp"])
    return frame.sort_values(["key", "step", "timestamp"], kind="stable", ignore_index=True)


def datasets(run_id: str, uri: str | None = None) -> pd.DataFrame:
    """The run's dataset inputs: rows of ``name``, ``context`` (``training`` or
    ``evaluation``), ``digest``, ``source_type``, ``source``, ``schema`` and ``profile``
    (the last two as parsed JSON, or ``None``)."""
    run = _run(_client(uri), run_id, uri)
    rows = []
    for given in run.inputs.dataset_inputs if run.inputs is not None else []:
        dataset, tags = given.dataset, {tag.key: tag.value for tag in given.tags}
        rows.append((dataset.name, tags.get("mlflow.data.context"), dataset.digest, dataset.source_type,
                     dataset.source, _json(dataset.schema), _json(dataset.profile)))
    return pd.DataFrame(rows, columns=["name", "context", "digest", "source_type", "source", "schema", "profile"])


def calls(run_id: str, uri: str | None = None) -> pd.DataFrame:
    """The run's call database (the ``calls`` event, or ``@intercept`` in a run), a row
    per recorded call: ``function`` (qualified name), ``call`` (its number, from 1),
    ``duration`` (seconds), ``raised`` (the exception's type, or ``None``) and
    ``message`` (the exception's). Values are not loaded: use
    :func:`pypads.recording.callmonitor.load` for them, and for replays.

    Raises :class:`ResultsError` if the run has no call database.
    """
    from pypads.recording import RUN_FOLDER, CallMonitorError, load

    client = _client(uri)
    _run(client, run_id, uri)
    if not client.list_artifacts(run_id, RUN_FOLDER):
        raise ResultsError(f"run {run_id} has no call database ({RUN_FOLDER}/ in its artifacts): calls are "
                           "recorded when the `calls` event is on (`pypads run --record-calls`, or an "
                           "event \"calls\" in PyPads' config)")
    try:
        database = load(run_id, tracking_uri=client.tracking_uri)
    except CallMonitorError as error:
        raise ResultsError(str(error)) from None
    rows = []
    for function, recorded in sorted(database.functions.items()):
        for number, call in recorded.calls.items():
            record = call.record  # read, not decoded: a summary must not load arrays or pickles
            raised = record.get("exception") if isinstance(record.get("exception"), dict) else None
            rows.append((function, number, _seconds(record.get("duration")),
                         str(raised.get("type")) if raised else None, str(raised.get("message")) if raised else None))
    return pd.DataFrame(rows, columns=["function", "call", "duration", "raised", "message"])


def pipeline(run_id: str, uri: str | None = None) -> pd.DataFrame:
    """The run's pipeline (``pipeline/graph.json``), a row per tracked call in the order
    they were made: ``id``, ``call`` (``DecisionTreeClassifier.fit``), ``kinds``
    (``fit``, ``predict``…), ``instance``, ``number`` (the how-manieth such call),
    ``depth`` (0: the script's own call), ``parent`` (the id of the call it was made
    in, or ``<NA>``), ``arguments`` and ``data_from`` (the ids of the calls whose
    results it took as arguments). Calls past the logger's ``max_calls`` are not there.
    """
    graph = _pipeline_graph(run_id, uri)
    data_from: dict[int, list[int]] = {}
    for edge in graph["edges"]:
        if edge["kind"] == "data":
            data_from.setdefault(edge["to"], []).append(edge["from"])
    rows = [{"id": node["id"], "call": node["call"], "kinds": node["kinds"], "instance": node["instance"],
             "number": node["number"], "depth": node["depth"], "parent": node["parent"],
             "arguments": node.get("arguments", []), "data_from": data_from.get(node["id"], [])}
            for node in graph["nodes"]]
    columns = ["id", "call", "kinds", "instance", "number", "depth", "parent", "arguments", "data_from"]
    frame = pd.DataFrame(rows, columns=columns)
    frame["parent"] = frame["parent"].astype("Int64")  # a top-level call's parent is <NA>, the others stay ints
    return frame


def pipeline_edges(run_id: str, uri: str | None = None) -> pd.DataFrame:
    """The pipeline's edges: ``from``, ``to`` (call ids, see :func:`pipeline`), ``kind``
    (``order``: made next; ``nested``: made inside; ``data``: took the result) and
    ``argument`` (for ``data``: which argument, else ``None``)."""
    graph = _pipeline_graph(run_id, uri)
    rows = [(edge["from"], edge["to"], edge["kind"], edge.get("argument")) for edge in graph["edges"]]
    return pd.DataFrame(rows, columns=["from", "to", "kind", "argument"])


def system(run_id: str, uri: str | None = None) -> dict[str, Any]:
    """What the run ran on, from ``environment/system.json``: a dict of sections
    (``system``, ``cpu``, ``memory``, ``disk``, ``process``, ``network``), each a dict
    of facts, e.g. ``system(run_id)["cpu"]["logical_cores"]``; and ``pseudonymized``
    (whether hostname, user, IP and MAC are pseudonyms). A fact the machine did not
    tell is absent (use ``.get``); a section whose logger was disabled too.

    Raises :class:`ResultsError` if the run has no ``system.json`` (the system loggers
    were disabled, or the run is still starting) or it is not one.
    """
    from pypads.core import SYSTEM as SCHEMA

    document = _json_artifact(run_id, SYSTEM_JSON, SCHEMA, uri,
                              "the system loggers (ISystem, ICpu, …) were disabled, or the run is still starting")
    return {key: value for key, value in document.items() if key not in ("schema", "provenance")}


def diff(run_a: str, run_b: str, uri: str | None = None) -> dict[str, Any]:
    """What changed from run ``run_a`` to run ``run_b``, and what it did: a dict of
    sections (``params``, ``datasets``, ``code``, ``packages``, ``mappings``,
    ``metrics``, ``system_metrics``, and ``runs``: which is ``a``, which ``b``), JSON-ready,
    as ``pypads diff --json`` prints it. A part a run did not record is reported, not
    raised; a run that is not there raises :class:`ResultsError` naming it."""
    return compare_runs(run_a, run_b, uri)


# --- reading the store ---------------------------------------------------------------
def _client(uri: str | None) -> mlflow_connection.MlflowClient:
    return mlflow_connection.MlflowClient(resolve_store(uri).tracking_uri)


def _shown(uri: str | None) -> str:
    return resolve_store(uri).display_uri


def _run(client: mlflow_connection.MlflowClient, run_id: str, uri: str | None) -> Any:
    try:
        return client.get_run(run_id)
    except mlflow_connection.MlflowException:
        raise ResultsError(f"no run {run_id!r} in {_shown(uri)}") from None


def _pipeline_graph(run_id: str, uri: str | None) -> dict[str, Any]:
    from pypads.core import PIPELINE_GRAPH as SCHEMA

    return _json_artifact(run_id, PIPELINE_GRAPH, SCHEMA, uri, "the `pipeline` event was off, or the run is still running")


def _json_artifact(run_id: str, path: str, schema: str, uri: str | None, why_missing: str) -> dict[str, Any]:
    """The run's JSON artifact ``path``, checked against ``schema``."""
    from pypads.core import validate

    client = _client(uri)
    _run(client, run_id, uri)
    with tempfile.TemporaryDirectory(prefix="pypads-results-") as folder:
        try:
            local = client.download_artifacts(run_id, path, folder)
        except (mlflow_connection.MlflowException, OSError):
            raise ResultsError(f"run {run_id} has no {path} ({why_missing})") from None
        try:
            document = json.loads(Path(local).read_text(encoding="utf-8"))
            validate(document, schema)
        except Exception as error:  # a file changed by hand, or of another pypads
            raise ResultsError(f"run {run_id}: {path} does not follow {schema}: {error}") from None
    return document


def _time(milliseconds: int | None) -> datetime | None:
    return datetime.fromtimestamp(milliseconds / 1000) if milliseconds else None


def _json(text: str | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _seconds(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
