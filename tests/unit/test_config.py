"""The tracker's Config: the seed-shaped dict in, typed and frozen values out."""

from __future__ import annotations

import dataclasses

import pytest

from pypads import DEFAULT_CONFIG, ConfigError
from pypads.config import Config


def test_defaults_come_out_typed_and_frozen():
    config = Config.build()
    assert config.events["metric"].hooks == ("pypads_metric",)
    assert config.events["parameters"].depth == 0 and config.events["metric"].depth == -1
    assert config.disabled == frozenset() and config.uploader == "auto" and config.flush_timeout is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.uploader = "thread"  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.events["metric"] = config.events["parameters"]  # type: ignore[index]


def test_given_keys_replace_defaults_and_the_callers_dict_is_not_shared(monkeypatch):
    monkeypatch.delenv("PYPADS_UPLOADER_IDLE", raising=False)
    given = {"events": {"metric": {"on": ["pypads_metric"], "with": {"max_calls": 3}}}, "disabled": ["IMacAddress"],
             "flush_timeout": 2}
    config = Config.build(given)
    given["events"]["metric"]["with"]["max_calls"] = 99
    assert list(config.events) == ["metric"] and config.events["metric"].options == {"max_calls": 3}
    assert config.disabled == {"IMacAddress"} and config.flush_timeout == 2.0 and config.uploader_idle == 300
    assert DEFAULT_CONFIG["flush_timeout"] is None


def test_the_environment_is_read_once_at_build(monkeypatch):
    monkeypatch.setenv("PYPADS_UPLOADER_IDLE", "12")
    config = Config.build()
    monkeypatch.setenv("PYPADS_UPLOADER_IDLE", "40")
    assert config.uploader_idle == 12
    assert Config.build({"uploader_idle": 0}).uploader_idle == 0


@pytest.mark.parametrize(("given", "message"), [
    ({"uploader": "cloud"}, "config: at $.uploader: 'cloud' is not one of"),
    ({"recursion_depth": "deep"}, "config: at $.recursion_depth: 'deep' is not of type 'integer'"),
    ({"colour": "blue"}, "config: at $: unknown key 'colour'"),
    (["events"], "config: expected a dict"),
])
def test_bad_input_is_one_error_naming_key_and_value(given, message):
    with pytest.raises(ConfigError) as raised:
        Config.build(given)
    assert str(raised.value).startswith(message)
