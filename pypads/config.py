"""A tracker's settings, built once from the seed-shaped dict and read by attribute.

``PyPads(config=...)`` takes a dict shaped like :data:`~pypads.recording.defaults.DEFAULT_CONFIG`
(the seed's form, and the documented one); each key given replaces pypads' default.
:meth:`Config.build` validates it, with one :class:`~pypads.core.errors.ConfigError`
naming the key and the value, and reads the environment (``$PYPADS_UPLOADER_IDLE``):
the floors below get typed values, never a dict to read by key.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, cast

from pypads.core import ConfigError, schema_error
from pypads.recording import DEFAULT_CONFIG, Event, require_mapping
from pypads.to_mlflow import uploader_idle

UploaderPlace = Literal["auto", "process", "thread"]


@dataclass(frozen=True)
class Config:
    """What ``PyPads(config=...)`` asked for, over pypads' defaults (see ``docs/configuration.md``)."""

    events: Mapping[str, Event] = field(default_factory=dict)
    """Each event: the hooks it is on, its loggers' options, how deep it sees."""
    recursion_identity: bool = False
    """Leave a call untracked inside a tracked call of the same function on the same object."""
    recursion_depth: int = -1
    """Track calls nested at most this deep (-1: at any depth)."""
    log_on_failure: bool = True
    """Log the failing script's exception into the run before it ends FAILED."""
    disabled: frozenset[str] = frozenset()
    """Loggers switched off by name."""
    env_allowlist: tuple[str, ...] = ()
    """Environment variables that may be logged."""
    pseudonymize: bool = False
    """Identifying values (hostname, user, IP, MAC address) as keyed pseudonyms."""
    flush_timeout: float | None = None
    """Seconds the end of a run waits for an MLflow call (None: pypads' default for the store)."""
    uploader: UploaderPlace = "auto"
    """Where the uploader runs: its own process, a thread of the script, or "auto"."""
    uploader_idle: float = 300.0
    """Seconds an uploader process waits, its run ended, for the next run (the config, else
    ``$PYPADS_UPLOADER_IDLE``, else 300)."""

    @classmethod
    def build(cls, config: Mapping[str, Any] | None = None) -> Config:
        """The config of ``PyPads(config=config)``, validated."""
        merged = _merge(DEFAULT_CONFIG, config)
        flush_timeout = merged["flush_timeout"]
        return cls(
            events=MappingProxyType({name: Event.from_spec(name, spec) for name, spec in merged["events"].items()}),
            recursion_identity=merged["recursion_identity"],
            recursion_depth=merged["recursion_depth"],
            log_on_failure=merged["log_on_failure"],
            disabled=frozenset(merged["disabled"]),
            env_allowlist=tuple(merged["env_allowlist"]),
            pseudonymize=merged["pseudonymize"],
            flush_timeout=None if flush_timeout is None else float(flush_timeout),
            uploader=cast(UploaderPlace, merged["uploader"]),
            uploader_idle=uploader_idle(merged["uploader_idle"]),  # a malformed variable fails here
        )


CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "events": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "required": ["on"],
                "properties": {
                    "on": {"type": "array", "items": {"type": "string"}},
                    "with": {"type": "object"},
                    "depth": {"type": "integer", "minimum": -1},
                },
            },
        },
        "recursion_identity": {"type": "boolean"},
        "recursion_depth": {"type": "integer", "minimum": -1},
        "log_on_failure": {"type": "boolean"},
        "disabled": {"type": "array", "items": {"type": "string"}},
        "env_allowlist": {"type": "array", "items": {"type": "string"}},
        "pseudonymize": {"type": "boolean"},
        "flush_timeout": {"type": ["number", "null"], "exclusiveMinimum": 0},
        "uploader": {"enum": ["auto", "process", "thread"]},
        "uploader_idle": {"type": ["number", "null"], "minimum": 0},
    },
}


def _merge(defaults: Mapping[str, Any], config: Mapping[str, Any] | None) -> dict[str, Any]:
    """The user's config over the defaults, key by key, after validation."""
    require_mapping("config", config, '{"events": {...}, "recursion_depth": ...}')
    merged = {**copy.deepcopy(dict(defaults)), **copy.deepcopy(dict(config or {}))}
    if config:  # pypads' defaults pass (a test checks them): a script without config never imports jsonschema
        _check_config(merged)
    return merged


def _check_config(merged: dict[str, Any]) -> None:
    error = schema_error(merged, CONFIG_SCHEMA)
    if error is not None:
        if error.validator == "additionalProperties":
            allowed = ", ".join(sorted(error.schema.get("properties", {})))
            unknown = sorted(set(error.instance) - set(error.schema.get("properties", {})))
            raise ConfigError(f"config: at {error.json_path}: unknown key {unknown[0]!r} (allowed: {allowed})")
        raise ConfigError(f"config: at {error.json_path}: {error.message}")
