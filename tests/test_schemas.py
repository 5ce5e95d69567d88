"""Every JSON artifact pypads writes follows its published schema and carries provenance."""

from __future__ import annotations

import json
from importlib import metadata

import jsonschema
import pytest
from sklearn import datasets, metrics
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from pypads.core.schemas import CALLMONITOR, PIPELINE_GRAPH, SYSTEM, VALUE_SUMMARY, schemas, validate

X, y = datasets.load_iris(return_X_y=True)


def test_schemas_are_valid_json_schemas():
    assert set(schemas()) >= {PIPELINE_GRAPH, VALUE_SUMMARY, CALLMONITOR, SYSTEM, "urn:pypads:schema:provenance:1"}
    for schema in schemas().values():
        jsonschema.Draft202012Validator.check_schema(schema)


def test_every_json_artifact_of_a_run_validates_and_names_its_origin(make_tracker, read_run):
    from pypads.recording.callmonitor import intercept

    @intercept
    def prepare(data):
        return data * 1.0

    tracker = make_tracker(config={"events": {
        "input": {"on": ["pypads_fit"], "with": {"max_bytes": 500, "layout": "call"}},
        "pipeline": {"on": ["pypads_fit", "pypads_predict", "pypads_transform", "pypads_metric"]},
        "calls": {"on": ["pypads_predict"]},
    }})
    model = Pipeline([("scale", StandardScaler()), ("tree", DecisionTreeClassifier())]).fit(prepare(X), y)
    metrics.accuracy_score(y, model.predict(X))
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)

    documents = {path: json.loads(run.artifact_text(path)) for path in run.artifacts() if path.endswith(".json")}
    kinds = {"graph": 0, "summary": 0, "database": 0, "function": 0, "record": 0, "system": 0}
    for path, document in documents.items():
        if path == "pipeline/graph.json":
            validate(document, PIPELINE_GRAPH)
            kinds["graph"] += 1
        elif path == "environment/system.json":
            validate(document, SYSTEM)
            assert document["provenance"]["logger"].startswith("ISystem") and document["provenance"]["mapping"] is None
            kinds["system"] += 1
        elif path.endswith(".summary.json"):
            validate(document, VALUE_SUMMARY)
            kinds["summary"] += 1
        elif path.startswith("callmonitor/"):
            kind = {"db.json": "database", "function.json": "function", "record.json": "record"}[path.rsplit("/", 1)[-1]]
            validate(document, CALLMONITOR, kind)
            kinds[kind] += 1
        else:
            pytest.fail(f"a JSON artifact without a schema: {path}")
    assert all(kinds.values()), kinds

    summary = documents["calls/0001_Pipeline.fit/input/X.summary.json"]
    assert summary["provenance"]["logger"] == "Input"
    assert summary["provenance"]["mapping"] == {"file": "sklearn_1.json", "version": "1.0.0"}
    assert summary["provenance"]["library"] == {"name": "scikit-learn", "version": metadata.version("scikit-learn")}
    assert documents["pipeline/graph.json"]["provenance"]["library"]["name"] == "scikit-learn"
    predict = next(doc for path, doc in documents.items() if path.endswith("Pipeline.predict/function.json"))
    assert predict["provenance"]["logger"] == "CallRecorder" and predict["provenance"]["mapping"]["file"] == "sklearn_1.json"


def test_local_call_database_files_validate(tmp_path, monkeypatch):
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", "import numpy as np\nfrom pypads.recording.callmonitor import intercept\n"
                             "@intercept\ndef f(a, b=1):\n    return a\nf(np.zeros(2)); f(3)"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    root = tmp_path / "call-monitor"
    validate(json.loads((root / "db.json").read_text()), CALLMONITOR, "database")
    validate(json.loads((root / "__main__.f" / "function.json").read_text()), CALLMONITOR, "function")
    validate(json.loads((root / "__main__.f" / "1" / "record.json").read_text()), CALLMONITOR, "record")
    for line in (root / "__main__.f" / "calls.jsonl").read_text().splitlines():
        validate(json.loads(line), CALLMONITOR, "record")
