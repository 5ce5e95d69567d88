"""What changed between two runs, and what it did: params, datasets, code, packages,
mapping files and metrics, as one JSON-ready dict (``pypads diff``, ``results.diff``).

Everything is read back through ``MlflowClient`` (artifacts downloaded into a temporary
folder), so a run on a tracking server compares as one in a local store. A part a run
did not record (its logger disabled, a clean working tree) is reported as such, never
an error: only a run that is not there is one (:class:`ResultsError`).
"""

from __future__ import annotations

import difflib
import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from pypads.core import ResultsError
from pypads.to_mlflow import mlflow_connection, resolve_store

PATCH = "git/uncommitted.patch"
REQUIREMENTS = "environment/requirements.txt"
GIT_TAGS = {"commit": "mlflow.source.git.commit", "branch": "mlflow.source.git.branch", "dirty": "pypads.git.dirty"}
MAPPINGS_TAG = "pypads.mappings"
# A diff of two patches is for reading, not applying: past this it is cut, and says so.
MAX_PATCH_DIFF_LINES = 300
MAX_PATCH_DIFF_CHARS = 30_000


def compare_runs(run_a: str, run_b: str, uri: str | None = None) -> dict[str, Any]:
    """What changed from run ``run_a`` to run ``run_b`` (full run ids) in the store
    ``PyPads(uri=uri)`` would use. Sections: ``runs``, ``params``, ``datasets``,
    ``code``, ``packages``, ``mappings``, ``metrics`` and ``system_metrics``; in each,
    ``a`` is the first run's value and ``b`` the second's (``docs/cli.md``)."""
    store = resolve_store(uri)
    client = mlflow_connection.MlflowClient(store.tracking_uri)
    runs = {}
    for side, run_id in (("a", run_a), ("b", run_b)):
        try:
            runs[side] = client.get_run(run_id)
        except mlflow_connection.MlflowException:
            missing = [given for given in (run_a, run_b) if not _exists(client, given)]
            raise ResultsError(f"no run {' and no run '.join(map(repr, missing or [run_id]))} in {store.display_uri}") from None
    a, b = runs["a"], runs["b"]
    with tempfile.TemporaryDirectory(prefix="pypads-diff-") as folder:
        patches = [_artifact_text(client, run.info.run_id, PATCH, Path(folder) / side) for side, run in runs.items()]
        requirements = [_artifact_text(client, run.info.run_id, REQUIREMENTS, Path(folder) / side) for side, run in runs.items()]
    metrics_a, metrics_b = a.data.metrics, b.data.metrics
    return {
        "runs": {side: _identity(client, run) for side, run in runs.items()},
        "params": compare_values(a.data.params, b.data.params),
        "datasets": compare_datasets(_datasets(a), _datasets(b)),
        "code": compare_code(a.data.tags, b.data.tags, patches[0], patches[1], a.info.run_id, b.info.run_id),
        "packages": compare_packages(requirements[0], requirements[1]),
        "mappings": _pair(a.data.tags.get(MAPPINGS_TAG), b.data.tags.get(MAPPINGS_TAG)),
        "metrics": compare_metrics(_headline(metrics_a), _headline(metrics_b)),
        "system_metrics": compare_metrics(_headline(metrics_a, system=True), _headline(metrics_b, system=True)),
    }


def compare_values(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Keys ``added`` (only in ``b``, with its value), ``removed`` (only in ``a``),
    ``changed`` (``{"a": …, "b": …}``) and the number ``unchanged``."""
    return {"added": {key: b[key] for key in sorted(b.keys() - a.keys())},
            "removed": {key: a[key] for key in sorted(a.keys() - b.keys())},
            "changed": {key: {"a": a[key], "b": b[key]} for key in sorted(a.keys() & b.keys()) if a[key] != b[key]},
            "unchanged": sum(1 for key in a.keys() & b.keys() if a[key] == b[key])}


def compare_metrics(a: Mapping[str, float], b: Mapping[str, float]) -> dict[str, Any]:
    """Each metric's latest value in both runs: ``changed`` ones with ``delta`` (b − a)
    and ``relative`` (delta / |a|, ``None`` when a is 0), ``only_a``, ``only_b`` and the
    number ``unchanged``."""
    found = compare_values(a, b)
    for values in found["changed"].values():
        values["delta"] = values["b"] - values["a"]
        values["relative"] = values["delta"] / abs(values["a"]) if values["a"] else None
    return {"changed": found["changed"], "only_a": found["removed"], "only_b": found["added"],
            "unchanged": found["unchanged"]}


def compare_datasets(a: Mapping[str, dict[str, Any]], b: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """Dataset inputs matched by name and context (``X (training)``): ``added``,
    ``removed``, and ``changed`` when the digest differs, with what changed in the
    profile (rows, elements, shapes) and the schema (columns added, removed, retyped)."""
    changed = {}
    for key in sorted(a.keys() & b.keys()):
        old, new = a[key], b[key]
        if old["digest"] == new["digest"]:
            continue
        profile = {name: {"a": old["profile"].get(name), "b": new["profile"].get(name)}
                   for name in sorted(old["profile"].keys() | new["profile"].keys())
                   if old["profile"].get(name) != new["profile"].get(name)}
        changed[key] = {"digest": _pair(old["digest"], new["digest"]), "profile": profile,
                        "schema": compare_values(old["schema"], new["schema"])}
    return {"added": {key: b[key]["digest"] for key in sorted(b.keys() - a.keys())},
            "removed": {key: a[key]["digest"] for key in sorted(a.keys() - b.keys())},
            "changed": changed,
            "unchanged": sum(1 for key in a.keys() & b.keys() if a[key]["digest"] == b[key]["digest"])}


def compare_code(tags_a: Mapping[str, str], tags_b: Mapping[str, str], patch_a: str | None, patch_b: str | None,
                 id_a: str, id_b: str) -> dict[str, Any]:
    """The git commit, branch and ``dirty`` flag (``None``: not recorded) and the
    uncommitted changes: each run's ``state`` (``recorded``, ``clean``: no patch as the
    tree was clean, ``not recorded``), whether the patch ``changed`` and a unified
    ``diff`` of the two patches, cut at a bound (``cut``)."""
    found: dict[str, Any] = {name: _pair(tags_a.get(tag), tags_b.get(tag)) for name, tag in GIT_TAGS.items()}
    diff_lines = list(difflib.unified_diff((patch_a or "").splitlines(), (patch_b or "").splitlines(),
                                           f"A {id_a[:8]}/{PATCH}", f"B {id_b[:8]}/{PATCH}", lineterm=""))
    text, cut = "\n".join(diff_lines[:MAX_PATCH_DIFF_LINES]), len(diff_lines) > MAX_PATCH_DIFF_LINES
    if len(text) > MAX_PATCH_DIFF_CHARS:
        text, cut = text[:MAX_PATCH_DIFF_CHARS], True
    found["patch"] = {"a": _patch_state(tags_a, patch_a), "b": _patch_state(tags_b, patch_b),
                      "changed": (patch_a or "") != (patch_b or ""), "diff": text, "cut": cut}
    return found


def compare_packages(a: str | None, b: str | None) -> dict[str, Any]:
    """``environment/requirements.txt`` of both runs (``name==version`` lines; ``None``:
    not recorded), matched by canonical name: ``added``, ``removed``, ``changed``
    (``{"a", "b", "direction"}``: ``upgraded``, ``downgraded`` or ``changed``) and the
    number ``unchanged``; all empty when a run did not record its packages."""
    found: dict[str, Any] = {"recorded": _pair(a is not None, b is not None)}
    pins_a, pins_b = parse_requirements(a or ""), parse_requirements(b or "")
    if a is None or b is None:
        pins_a = pins_b = {}
    compared = compare_values(pins_a, pins_b)
    for values in compared["changed"].values():
        values["direction"] = _direction(values["a"], values["b"])
    return {**found, **compared}


def parse_requirements(text: str) -> dict[str, str]:
    """``name==version`` lines as ``{canonical name: version}``; other lines are left out."""
    pins: dict[str, str] = {}
    for line in text.splitlines():
        name, separator, version = line.strip().partition("==")
        if separator and name and version:
            pins[canonicalize_name(name)] = version.strip()
    return pins


def _direction(a: str, b: str) -> str:
    try:
        return "upgraded" if Version(b) > Version(a) else "downgraded" if Version(b) < Version(a) else "changed"
    except InvalidVersion:
        return "changed"


def _pair(a: Any, b: Any) -> dict[str, Any]:
    return {"a": a, "b": b, "changed": a != b}


def _patch_state(tags: Mapping[str, str], patch: str | None) -> str:
    if patch is not None:
        return "recorded"
    return "clean" if tags.get(GIT_TAGS["dirty"]) == "False" else "not recorded"


def _headline(metrics: Mapping[str, float], system: bool = False) -> dict[str, float]:
    """The run's metrics outside ``system/`` (or, with ``system``, those in it)."""
    return {key: value for key, value in metrics.items() if key.startswith("system/") == system}


def _datasets(run: Any) -> dict[str, dict[str, Any]]:
    """The run's dataset inputs by ``name (context)``: digest, profile and schema as
    flat dicts (a column's name to its type; a tensor's spec as one entry). Other data
    under a name and context already taken (``X`` fitted on twice) is ``X (training) #2``,
    in the order the run logged them."""
    found: dict[str, dict[str, Any]] = {}
    for given in run.inputs.dataset_inputs if run.inputs is not None else []:
        dataset, tags = given.dataset, {tag.key: tag.value for tag in given.tags}
        context = tags.get("mlflow.data.context")
        key = base = f"{dataset.name} ({context})" if context else dataset.name
        number = 2
        while key in found and found[key]["digest"] != dataset.digest:
            key, number = f"{base} #{number}", number + 1
        profile = _json(dataset.profile)
        found[key] = {"digest": dataset.digest, "profile": profile if isinstance(profile, dict) else {},
                      "schema": _columns(_json(dataset.schema))}
    return found


def _columns(schema: Any) -> dict[str, str]:
    """A dataset's MLflow schema as ``{column: type}``: named columns by name, others by
    position; a tensor spec as the JSON of its spec."""
    if not isinstance(schema, dict):
        return {}
    if isinstance(schema.get("mlflow_colspec"), list):
        return {str(column.get("name", index)): str(column.get("type")) for index, column in
                enumerate(schema["mlflow_colspec"]) if isinstance(column, dict)}
    return {key: value if isinstance(value, str) else json.dumps(value, sort_keys=True)
            for key, value in (schema.get("mlflow_tensorspec") or {}).items() if value is not None}


def _json(text: str | None) -> Any:
    try:
        return json.loads(text) if text else None
    except json.JSONDecodeError:
        return None


def _identity(client: mlflow_connection.MlflowClient, run: Any) -> dict[str, Any]:
    experiment = client.get_experiment(run.info.experiment_id)
    return {"run_id": run.info.run_id, "run_name": run.info.run_name, "status": run.info.status,
            "experiment": experiment.name if experiment is not None else run.info.experiment_id}


def _exists(client: mlflow_connection.MlflowClient, run_id: str) -> bool:
    try:
        client.get_run(run_id)
        return True
    except mlflow_connection.MlflowException:
        return False


def _artifact_text(client: mlflow_connection.MlflowClient, run_id: str, path: str, folder: Path) -> str | None:
    """The run's artifact ``path`` as text, or ``None`` if the run has none."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        local = client.download_artifacts(run_id, path, str(folder))
        return Path(local).read_text(encoding="utf-8", errors="replace")
    except (mlflow_connection.MlflowException, OSError):
        return None
