"""Mapping files: validation with clear errors, version choice and the three hook kinds."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import jsonschema
import pytest
from conftest import run_script
from sklearn.tree import DecisionTreeClassifier

from pypads import MappingError, PyPads
from pypads.config import CONFIG_SCHEMA
from pypads.core.mapping import mapping_schema, read_mapping_file
from pypads.core.mapping.files import default_mapping_paths
from pypads.core.mapping.reading import validation_mark
from pypads.recording.defaults import DEFAULT_CONFIG


def mapping_document(**entry_changes):
    entry = {
        "name": "toy model",
        "implementation": {"toylib": "toylib.models.Model"},
        "hooks": {"pypads_fit": ["fit"]},
        **entry_changes,
    }
    return {
        "metadata": {"library": "toylib", "library_versions": ">=1.0", "mapping_version": "1.0"},
        "algorithms": [entry],
    }


def write_json(path: Path, document) -> Path:
    path.write_text(json.dumps(document) if not isinstance(document, str) else document)
    return path


BAD_FILES = {
    "malformed JSON": ('{"metadata": {', "$", "malformed JSON at line 1"),
    "unknown key": (mapping_document(hook={"pypads_fit": ["fit"]}), "$.algorithms[0]", "unknown key(s) 'hook'"),
    "unknown hook type": (
        mapping_document(hooks={"pypads_fit": [{"type": "module_name", "name": "x"}]}),
        "$.algorithms[0].hooks.pypads_fit[0].type",
        "'module_name' is not one of ['package_name', 'qual_name']",
    ),
    "bad regex": (mapping_document(hooks={"pypads_fit": ["fit("]}), "$.algorithms[0].hooks.pypads_fit[0]", "bad regular expression 'fit('"),
    "unknown library": (
        mapping_document(implementation={"tensorflow": "tensorflow.keras.Model"}),
        "$.algorithms[0].implementation",
        "unknown library 'tensorflow'",
    ),
    "bad version specifier": (
        {**mapping_document(), "metadata": {"library": "toylib", "library_versions": "version one", "mapping_version": "1"}},
        "$.metadata.library_versions",
        "not a PEP 440 version specifier",
    ),
    "missing metadata": ({"algorithms": []}, "$", "'metadata' is a required property"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_mapping_file_names_file_path_and_problem_and_patches_nothing(case, tmp_path, store_uri):
    document, json_path, problem = BAD_FILES[case]
    path = write_json(tmp_path / "broken.json", document)
    fit_before = vars(DecisionTreeClassifier)["fit"]
    meta_path_before = list(sys.meta_path)
    with pytest.raises(MappingError) as raised:
        PyPads(uri=store_uri, mapping_paths=[path])
    error = raised.value
    assert error.source == str(path)
    assert error.json_path == json_path
    assert problem in error.problem
    assert str(path) in str(error) and json_path in str(error)
    assert vars(DecisionTreeClassifier)["fit"] is fit_before
    assert sys.meta_path == meta_path_before
    # and the file is not marked as validated: the next PyPads() checks it again
    if isinstance(document, dict):
        assert not validation_mark(path.read_text()).exists()
    with pytest.raises(MappingError) as again:
        PyPads(uri=store_uri, mapping_paths=[path])
    assert str(again.value) == str(error)


def test_a_forged_validation_mark_does_not_hide_what_is_wrong(tmp_path, store_uri):
    # A text that passed the schema once is not validated again; a mark planted in the
    # cache for a text that never passed must not turn its clear error into a KeyError.
    path = write_json(tmp_path / "broken.json", {"algorithms": []})
    with pytest.raises(MappingError) as unmarked:
        PyPads(uri=store_uri, mapping_paths=[path])
    forged = validation_mark(path.read_text())
    forged.parent.mkdir(parents=True, exist_ok=True)
    forged.touch()
    with pytest.raises(MappingError) as marked:
        PyPads(uri=store_uri, mapping_paths=[path])
    assert str(marked.value) == str(unmarked.value)
    assert "'metadata' is a required property" in str(marked.value)


def test_valid_file_reads_into_entries(tmp_path):
    file = read_mapping_file(write_json(tmp_path / "m.json", mapping_document()))
    assert (file.library, file.distribution, str(file.library_versions)) == ("toylib", "toylib", ">=1.0")
    assert [entry.target for entry in file.entries] == ["toylib.models.Model"]
    assert file.entries[0].hooks_for("fit", None) == {"pypads_fit"}
    assert file.entries[0].hooks_for("fit_transform", None) == set()


def test_shipped_mappings_validate_against_the_published_schema():
    paths = default_mapping_paths()
    assert [path.name for path in paths] == ["lightgbm_4.json", "sklearn_1.json", "statsmodels_0.json", "xgboost_3.json"]
    for path in paths:
        jsonschema.validate(json.loads(path.read_text()), mapping_schema())


def test_the_default_config_is_valid():
    # PyPads() without config does not validate it (see pypads.config)
    jsonschema.validate(DEFAULT_CONFIG, CONFIG_SCHEMA)


def test_loader_picks_the_file_that_serves_the_installed_version(toylib, tmp_path, make_tracker, read_run):
    old = mapping_document(hooks={"pypads_fit": ["score"]})
    old["metadata"]["library_versions"] = "<1.0"
    new = mapping_document(hooks={"pypads_fit": ["fit"]})
    new["metadata"]["library_versions"] = ">=1.0,<2"
    paths = [write_json(tmp_path / "old.json", old), write_json(tmp_path / "new.json", new)]
    with pytest.warns(UserWarning, match=re.escape("old.json: at $.metadata.library_versions: '<1.0' excludes it")):
        tracker = make_tracker(mapping_paths=paths, include_default_mappings=False)
    assert [Path(file.source).name for file in tracker.mappings] == ["new.json"]
    from toylib.models import Model

    Model().fit([1, 2]).score([3])
    run_id = tracker.run_id
    tracker.end_run()
    folders = {path.split("/")[1] for path in read_run(run_id).artifacts("calls")}
    assert folders == {"Model.fit.jsonl"}


def test_without_default_mappings_sklearn_is_not_tracked(toylib, tmp_path, make_tracker, read_run):
    tracker = make_tracker(mapping_paths=[write_json(tmp_path / "m.json", mapping_document())], include_default_mappings=False)
    DecisionTreeClassifier().fit([[0], [1]], [0, 1])
    run_id = tracker.run_id
    tracker.end_run()
    assert read_run(run_id).params == {}


def test_always_name_and_package_name_hooks_on_modules(toylib, make_tracker, read_run):
    document = mapping_document()
    document["algorithms"] = [
        {"name": "scoring", "implementation": {"toylib": "toylib.scoring"}, "hooks": {"pypads_metric": "always"}},
        {
            "name": "re-exported metrics",
            "implementation": {"toylib": "toylib.reexports"},
            "hooks": {"pypads_metric": [{"type": "package_name", "name": ".*classification.*"}]},
        },
        {"name": "model", "implementation": {"toylib": "toylib.models.Model"}, "hooks": {"pypads_metric": ["sc.re"]}},
    ]
    tracker = make_tracker(mapping=document, include_default_mappings=False)
    import toylib.reexports
    import toylib.scoring
    from toylib.models import Model

    toylib.scoring.accuracy([1], [1])  # always: every public function
    toylib.reexports.kappa([1], [1])  # defined in a module matching .*classification.*
    toylib.reexports.helper("text")  # defined in toylib.scoring: tracked by "always"; text is no metric
    Model().score([2, 3])  # name regex
    run_id = tracker.run_id
    tracker.end_run()
    run = read_run(run_id)
    assert run.metrics == {"accuracy": 1.0, "kappa": 0.5, "Model.score": 5.0}
    assert "metrics/helper/0.txt" in run.artifacts()


def test_clear_imports_drops_affected_modules_so_they_load_patched(toylib, make_tracker, read_run):
    import toylib.models

    old_model = toylib.models.Model
    tracker = make_tracker(mapping=mapping_document(), include_default_mappings=False,
                           clear_imports=True, affected_modules=["toylib.models"])
    assert "toylib.models" not in sys.modules
    from toylib.models import Model

    assert Model is not old_model
    Model().fit([1])
    run_id = tracker.run_id
    tracker.end_run()
    assert read_run(run_id).artifacts("calls") == ["calls/Model.fit.jsonl"]


def test_reload_modules_reloads_and_patches(toylib, make_tracker):
    import toylib.models

    old_model = toylib.models.Model
    make_tracker(mapping=mapping_document(), include_default_mappings=False, reload_modules=True,
                 affected_modules=["toylib.models"])
    assert toylib.models.Model is not old_model
    assert vars(toylib.models.Model)["fit"] is not vars(old_model)["fit"]
    assert not hasattr(vars(old_model)["fit"], "__wrapped__")  # the stale class stays as it was


def test_reload_and_clear_without_affected_modules_warn_and_touch_nothing(make_tracker):
    import sklearn.base

    base = sklearn.base.BaseEstimator
    with pytest.warns(UserWarning, match="act on affected_modules only"):
        make_tracker(clear_imports=True)
    assert sys.modules["sklearn.base"].BaseEstimator is base
    assert isinstance(DecisionTreeClassifier(), base)


CLASS_DICTIONARIES_SCRIPT = """
import json, sys
import numpy as np, pandas as pd
import sklearn.preprocessing, sklearn.pipeline, sklearn.linear_model, sklearn.decomposition
if sys.argv[-1] == "tracked":
    from pypads import PyPads
    tracker = PyPads(name="dicts")
import sklearn.ensemble, sklearn.cluster, sklearn.svm
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.decomposition import PCA
from sklearn.tree import DecisionTreeClassifier

class Doubler(TransformerMixin, BaseEstimator):
    def fit(self, X, y=None):
        return self
    def transform(self, X):
        return np.asarray(X) * 2
    def get_feature_names_out(self, input_features=None):
        return np.array(["a2", "b2"], dtype=object)

class MyScaler(StandardScaler):
    pass

X = pd.DataFrame({"a": [1.0, 2.0, 4.0], "b": [3.0, 5.0, 9.0]}, index=[10, 11, 12])
outputs = {}
for name, model in {"scaler": StandardScaler(), "pipeline": make_pipeline(StandardScaler(), PCA(1)),
                    "doubler": Doubler(), "subclass": MyScaler()}.items():
    out = model.set_output(transform="pandas").fit_transform(X)
    again = model.transform(X)
    outputs[name] = [type(out).__name__, out.to_json(), type(again).__name__, again.to_json()]

def every_class(root=object):
    seen, stack = {}, [root]
    while stack:
        cls = stack.pop()
        if cls in seen or cls is type:
            continue
        seen[cls] = sorted(vars(cls))
        stack.extend(type.__subclasses__(cls))
    return seen

keys = {f"{cls.__module__}.{cls.__qualname__}": names for cls, names in every_class().items()
        # a class's __module__ can be a slot descriptor (seen on Python 3.10), not a name
        if isinstance(cls.__module__, str) and cls.__module__.startswith(("sklearn", "__main__"))}
tracked = "pypads/core/patching" in vars(DecisionTreeClassifier)["fit"].__code__.co_filename  # not a venv named pypads-…
print(json.dumps({"tracked": tracked, "outputs": outputs, "keys": keys}))
"""


def test_inherited_mixin_methods_leave_class_dictionaries_and_set_output_as_untracked(tmp_path):
    """scikit-learn's _SetOutputMixin wraps fit_transform/transform of every class that
    defines them in its own __dict__: pypads must not put an inherited one there."""
    results = {}
    for mode in ("untracked", "tracked"):
        finished = run_script(CLASS_DICTIONARIES_SCRIPT.replace("sys.argv[-1]", repr(mode)), tmp_path)
        assert finished.returncode == 0, finished.stderr
        results[mode] = json.loads(finished.stdout.strip().splitlines()[-1])
    assert results["tracked"]["tracked"] and not results["untracked"]["tracked"]
    assert results["tracked"]["outputs"] == results["untracked"]["outputs"]
    untracked, tracked = results["untracked"]["keys"], results["tracked"]["keys"]
    # __slotnames__ is copyreg's cache, written into a class the first time one of its
    # objects is pickled (pypads pickles the fitted model to save it); nothing reads it
    # but pickle itself, and an untracked script that pickles gets it too.
    gained = {name: sorted(set(tracked[name]) - set(untracked[name]) - {"__slotnames__"})
              for name in tracked.keys() & untracked.keys()}
    assert {name: keys for name, keys in gained.items() if keys} == {}
    assert set(tracked["__main__.Doubler"]) - {"__slotnames__"} == set(untracked["__main__.Doubler"])
