"""Saving an estimator the script pickled as an MLflow model."""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cloudpickle
import mlflow
import mlflow.pyfunc
from mlflow.entities import LoggedModelOutput, LoggedModelStatus, Metric
from mlflow.exceptions import MlflowException
from mlflow.models import Model, ModelSignature
from mlflow.tracking import MlflowClient

from pypads.to_mlflow.connection.entities import MAX_ENTITIES_PER_BATCH, MlflowCaller, Warn, direct
from pypads.to_mlflow.connection.inputs import metrics_of, schema_of

PICKLE = "model.pkl"  # a saved model's pickle, as mlflow.sklearn names it


def log_model(client: MlflowClient, run_id: str, entry: dict[str, Any], pickled: bytes, call: MlflowCaller = direct,
              child_run_id: str | None = None, *, experiment_id: str | None = None,
              versions: dict[str, str | None] | None = None, card: dict[str, Any] | None = None,
              dataset_of: Callable[[str], dict[str, Any] | None] = lambda name: None,
              warn: Warn = lambda key, message: None) -> str:
    """Save the estimator the script pickled as an MLflow model of the sklearn flavour
    (pyfunc-loadable if it predicts, with the signature the logger described), listed
    among its source run's logged models: the run's, or its child run ``child_run_id``'s
    when the run compares models (:func:`list_models` lists those in the run too, in one
    call for all of them); returns its model id.

    The model folder is written from the pickle as it is, with MLflow's ``Model`` API
    (what ``mlflow.sklearn.save_model`` writes): saving through scikit-learn would
    unpickle the estimator here, and importing scikit-learn into the uploader takes
    seconds. Requirements are the installed versions, named explicitly: MLflow's
    inference runs the model in a subprocess, seconds per model.

    ``experiment_id`` (the run's) and ``versions`` (installed versions by distribution,
    filled as they are looked up) are what a caller saving several models of one run
    passes to each: reading a version from the installed metadata takes milliseconds,
    and six of them made a fifth of a model's save.

    ``card`` is the model's "model_card" entry: its params become the model's, and its
    metrics are logged again into the source run with the model's id and the dataset
    each was computed on (``dataset_of`` gives a name's "dataset" entry), the same key,
    value, time and step, so that the run's history keeps one point and *Models* shows
    the model's scores, params and datasets."""
    if experiment_id is None:
        experiment_id = call(client.get_run, run_id).info.experiment_id
    source = child_run_id or run_id
    own, facts = entry.get("params"), (card or {}).get("params")
    # A search's refit model: its own params and the search's settings (a journal is read as untrusted text).
    given = {**(own if isinstance(own, dict) else {}), **(facts if isinstance(facts, dict) else {})}
    params = {str(key): str(value) for key, value in given.items()}
    model = call(lambda: client.create_logged_model(experiment_id, name=entry["name"], source_run_id=source,
                                                    tags=entry.get("tags"), params=params or None))
    folder = Path(tempfile.mkdtemp(prefix="pypads-model-"))
    try:
        described = Model(artifact_path=model.artifact_location, model_uuid=model.model_id, run_id=source,
                          model_id=model.model_id)
        _write_model_folder(folder, entry, pickled, {} if versions is None else versions, described)
        call(client.log_model_artifacts, model.model_id, str(folder))
    except Exception:
        # Marked FAILED rather than left PENDING: the UI would list it as a model to load.
        call(client.finalize_logged_model, model.model_id, LoggedModelStatus.FAILED)
        raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    call(client.log_outputs, source, [LoggedModelOutput(model.model_id, step=0)])
    call(client.finalize_logged_model, model.model_id, LoggedModelStatus.READY)
    if card is not None:
        # Named as the source run names them: bare in the model's child run, after the label in the parent.
        prefix = "" if child_run_id else f"{card.get('model_label')}."
        lines = [(prefix + key, value, timestamp, step, data) for key, value, timestamp, step, data in metrics_of(card)]
        log_linked_metrics(client, source, lines, dataset_of, warn, call, model_id=model.model_id)
    return str(model.model_id)


def list_models(client: MlflowClient, run_id: str, model_ids: list[str], call: MlflowCaller = direct) -> None:
    """List ``model_ids`` among the logged models of ``run_id`` (saved with a child run as their source)."""
    if model_ids:
        call(client.log_outputs, run_id, [LoggedModelOutput(model_id, step=0) for model_id in model_ids])


def log_linked_metrics(client: MlflowClient, run_id: str, lines: list[tuple[str, float, int, int, str | None]],
                       dataset_of: Callable[[str], dict[str, Any] | None], warn: Warn, call: MlflowCaller = direct,
                       model_id: str | None = None) -> None:
    """Metrics ``(key, value, timestamp, step, dataset name)`` linked to the dataset each
    was computed on (``dataset_of`` gives a name's "dataset" entry) and to ``model_id``:
    what *Models* and the run's *Model metrics* show beside a score. One MLflow refuses
    is a warning; the store failing raises."""
    metrics = []
    for key, value, timestamp, step, data in lines:
        dataset = dataset_of(data) if data is not None else None
        name, digest = (dataset["name"], dataset["digest"]) if dataset else (None, None)
        metrics.append(Metric(key, value, timestamp, step, model_id=model_id, dataset_name=name, dataset_digest=digest))
    for start in range(0, len(metrics), MAX_ENTITIES_PER_BATCH):
        try:
            call(lambda part=metrics[start:start + MAX_ENTITIES_PER_BATCH]: client.log_batch(run_id, metrics=part))
        except MlflowException as error:
            if error.error_code != "INVALID_PARAMETER_VALUE":
                raise
            warn(f"linked metrics:{model_id or run_id}", f"MLflow refused metrics of {model_id or run_id}: {error.message}")


def _write_model_folder(folder: Path, entry: dict[str, Any], pickled: bytes, versions: dict[str, str | None],
                        model: Model) -> None:
    distribution = entry.get("distribution")
    requirements = _requirements(distribution if isinstance(distribution, str) else entry.get("module", ""), versions)
    flavour = entry.get("flavour")
    if isinstance(flavour, str) and flavour != "sklearn":
        _save_in_flavour(folder, flavour, pickled, requirements, entry, model)
        return
    (folder / PICKLE).write_bytes(pickled)
    (folder / "requirements.txt").write_text("\n".join(requirements))
    python = ".".join(map(str, sys.version_info[:3]))
    # JSON is YAML: the two environment files MLflow writes beside a model, for serving it.
    (folder / "python_env.yaml").write_text(json.dumps({"python": python, "build_dependencies": ["pip", "setuptools", "wheel"],
                                                         "dependencies": ["-r requirements.txt"]}, indent=2))
    (folder / "conda.yaml").write_text(json.dumps({"name": "mlflow-env", "channels": ["conda-forge"], "dependencies": [
        f"python={python}", "pip", {"pip": requirements}]}, indent=2))
    inputs = schema_of(entry.get("input"))
    if inputs is not None:  # data of a kind with no schema (a list, a generator): no signature
        model.signature = ModelSignature(inputs, schema_of(entry.get("output")))
    if entry.get("predicts", True):  # pyfunc's predict calls the estimator's
        mlflow.pyfunc.add_to_model(model, loader_module="mlflow.sklearn", model_path=PICKLE, conda_env="conda.yaml",
                                   python_env="python_env.yaml", predict_fn="predict")
    model.add_flavor("sklearn", pickled_model=PICKLE, sklearn_version=_version("scikit-learn", versions),
                     serialization_format="cloudpickle", code=None)
    model.model_size_bytes = sum(path.stat().st_size for path in folder.iterdir())
    model.save(str(folder / "MLmodel"))


def _save_in_flavour(folder: Path, flavour: str, pickled: bytes, requirements: list[str], entry: dict[str, Any],
                     model: Model) -> None:
    """Save a library's own model (an XGBoost ``Booster``) with MLflow's flavour for it
    (``mlflow.xgboost``), which writes it in the library's format: it has to be unpickled
    here, and its library imported, as that flavour's ``load_model`` will. Requirements
    are given, not inferred: MLflow's inference runs the model in a subprocess."""
    if not flavour.isidentifier():
        raise ValueError(f"{flavour!r} names no MLflow flavour")
    saving = importlib.import_module(f"mlflow.{flavour}")
    loaded = cloudpickle.loads(pickled)  # the journal's own pickle: as trusted as the journal
    inputs = schema_of(entry.get("input"))
    signature = ModelSignature(inputs, schema_of(entry.get("output"))) if inputs is not None else None
    saving.save_model(loaded, str(folder), mlflow_model=model, signature=signature, pip_requirements=requirements)


def _requirements(library: str, versions: dict[str, str | None]) -> list[str]:
    """Exact versions of what loading the model needs: MLflow, scikit-learn, cloudpickle,
    numpy, scipy, and ``library``: the distribution that installed the model's library,
    as its mapping file names it (``xgboost-cpu``), else its module's top-level package
    as a distribution's name (``lightgbm``; a class of the script's names none)."""
    names = ["mlflow", "scikit-learn", "cloudpickle", "numpy", "scipy", library.split(".")[0]]
    return [f"{name}=={version}" for name in dict.fromkeys(names) if name and (version := _version(name, versions))]


def _version(distribution: str, versions: dict[str, str | None]) -> str | None:
    if distribution not in versions:
        try:
            versions[distribution] = importlib.metadata.version(distribution)
        except (importlib.metadata.PackageNotFoundError, ValueError):  # mlflow-skinny for mlflow, a package of a script
            versions[distribution] = None
    return versions[distribution]
