"""Bad input to PyPads() is one clear ConfigError or MappingError naming where it is
(argument, file, JSON path) and the value; what cannot be judged before an import is one
warning at that import, which never fails."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import pytest

from pypads import ConfigError, MappingError, PyPads
from pypads.recording.loggers import Output


def toy_mapping(target: str = "toylib.models.Model", hooks=None, versions: str = ">=1.0") -> dict:
    return {
        "metadata": {"library": "toylib", "library_versions": versions, "mapping_version": "1.0"},
        "algorithms": [{"name": "toy", "implementation": {"toylib": target},
                        "hooks": hooks or {"pypads_fit": ["fit"]}}],
    }


def sklearn_mapping(target: str, hooks: dict) -> dict:
    return {
        "metadata": {"library": "sklearn", "distribution": "scikit-learn", "library_versions": ">=1", "mapping_version": "1"},
        "algorithms": [{"name": "user entry", "implementation": {"sklearn": target}, "hooks": hooks}],
    }


def write(path: Path, document: dict) -> Path:
    path.write_text(json.dumps(document))
    return path


def raised_by(error_type, **arguments) -> str:
    meta_path = list(sys.meta_path)
    with pytest.raises(error_type) as raised:
        PyPads(**arguments)
    assert sys.meta_path == meta_path  # nothing was patched
    return str(raised.value)


# --- arguments of the wrong kind: raw ValueError/TypeError before ---------------------------

def test_config_that_is_not_a_dict(store_uri):
    message = raised_by(ConfigError, uri=store_uri, config="recursion_depth=1")
    assert message.startswith("config:") and "'recursion_depth=1'" in message and "str" in message


def test_logging_fns_that_is_not_a_dict(store_uri):
    message = raised_by(ConfigError, uri=store_uri, logging_fns=[Output()])
    assert message.startswith("logging_fns:") and "list" in message and "Output(" in message


def test_mapping_paths_given_one_path(store_uri, tmp_path):
    path = write(tmp_path / "file.json", toy_mapping())
    message = raised_by(ConfigError, uri=store_uri, mapping_paths=str(path))
    assert message.startswith("mapping_paths:") and repr(str(path)) in message


# --- the config: a hook name no mapping defines, option values of the wrong kind --------------

def test_config_hook_no_mapping_defines_suggests_the_close_one(store_uri):
    config = {"events": {"parameters": {"on": ["pypads_fitt"]}}}
    message = raised_by(ConfigError, uri=store_uri, config=config)
    assert "$.events.parameters.on[0]" in message and "'pypads_fitt'" in message
    assert "did you mean 'pypads_fit'" in message


def test_write_format_of_the_wrong_kind(store_uri):
    config = {"events": {"output": {"on": ["pypads_fit"], "with": {"write_format": "xml"}}}}
    message = raised_by(ConfigError, uri=store_uri, config=config)
    assert "$.events.output.with.write_format" in message and "'xml'" in message and "'pickle'" in message


def test_max_bytes_of_the_wrong_kind(store_uri):
    config = {"events": {"input": {"on": ["pypads_fit"], "with": {"_pypads_max_bytes": "big"}}}}
    message = raised_by(ConfigError, uri=store_uri, config=config)
    assert "$.events.input.with.max_bytes" in message and "'big'" in message and "whole number" in message


def test_logger_option_of_the_wrong_kind_given_in_logging_fns(store_uri):
    message = raised_by(ConfigError, uri=store_uri, logging_fns={"output": Output(write_format="xml")})
    assert "logging_fns['output']" in message and "'xml'" in message


# --- mapping entries, where the library is already imported: errors at PyPads() --------------

def test_entry_naming_a_class_that_does_not_exist(store_uri, tmp_path):
    import sklearn.tree  # noqa: F401

    path = write(tmp_path / "typo.json", sklearn_mapping("sklearn.tree.DecisionTreeClassifer", {"pypads_fit": ["fit"]}))
    message = raised_by(MappingError, uri=store_uri, mapping_paths=[path])
    assert str(path) in message and "$.algorithms[0].implementation.sklearn" in message
    assert "'sklearn.tree.DecisionTreeClassifer' does not exist" in message


def test_module_entry_pattern_that_matches_nothing(store_uri, tmp_path):
    import sklearn.metrics  # noqa: F401

    path = write(tmp_path / "metrics.json", sklearn_mapping("sklearn.metrics", {"pypads_metric": ["acuracy_score"]}))
    message = raised_by(MappingError, uri=store_uri, mapping_paths=[path])
    assert str(path) in message and "$.algorithms[0].hooks.pypads_metric" in message and "'acuracy_score'" in message


def test_class_entry_pattern_that_matches_nothing_yet_is_one_warning(toylib, tmp_path, make_tracker):
    import toylib.models  # noqa: F401

    path = write(tmp_path / "toy.json", toy_mapping(hooks={"pypads_fit": ["fitt"]}))
    with pytest.warns(UserWarning) as caught:
        make_tracker(mapping_paths=[path], include_default_mappings=False)
    messages = [str(warning.message) for warning in caught if "fitt" in str(warning.message)]
    assert len(messages) == 1
    assert str(path) in messages[0] and "$.algorithms[0].hooks.pypads_fit" in messages[0]


# --- mapping entries of a library imported later: one warning at its import, never an error --

def test_entry_naming_a_missing_class_warns_at_import_and_the_import_succeeds(toylib, tmp_path, make_tracker, capsys):
    path = write(tmp_path / "toy.json", toy_mapping(target="toylib.models.Modle"))
    make_tracker(mapping_paths=[path], include_default_mappings=False)
    with pytest.warns(UserWarning, match=r"Modle") as caught:
        import toylib.models
    message = str(caught[0].message)
    assert str(path) in message and "$.algorithms[0].implementation.toylib" in message and "'toylib.models.Modle'" in message
    assert toylib.models.Model().fit([1, 2]).total == 3


def test_import_time_warning_never_fails_the_import_when_warnings_are_errors(toylib, tmp_path, make_tracker, capsys):
    path = write(tmp_path / "toy.json", toy_mapping(target="toylib.scoring", hooks={"pypads_metric": ["acc"]}))
    make_tracker(mapping_paths=[path], include_default_mappings=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        import toylib.scoring
    assert toylib.scoring.accuracy([1], [1]) == 1.0
    stderr = capsys.readouterr().err
    assert str(path) in stderr and "$.algorithms[0].hooks.pypads_metric" in stderr and "'acc'" in stderr


# --- a version range that excludes the installed library: one warning -------------------------

def test_mapping_file_for_other_versions_is_one_warning(toylib, tmp_path, make_tracker):
    path = write(tmp_path / "old.json", toy_mapping(versions="<1.0"))
    with pytest.warns(UserWarning) as caught:
        tracker = make_tracker(mapping_paths=[path], include_default_mappings=False)
    messages = [str(warning.message) for warning in caught if "old.json" in str(warning.message)]
    assert len(messages) == 1
    assert "toylib 1.2.0" in messages[0] and "'<1.0'" in messages[0] and "$.metadata.library_versions" in messages[0]
    assert tracker.mappings == []
