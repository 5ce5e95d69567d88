"""Events: which loggers run for which hooks, as the config and ``logging_fns`` say.

A hook (``pypads_fit``) is what a mapping file attaches to an attribute; an event
(``parameters``) is what the config switches on for a set of hooks; loggers are what
``logging_fns`` attach to an event. This module validates both and builds the table
from a set of hooks to the handlers that must run.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from typing import Any

import jsonschema

from pypads.calls import Handler
from pypads.errors import ConfigError
from pypads.loggers.base import Logger

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
    },
}


def merge_config(defaults: Mapping[str, Any], config: Mapping[str, Any] | None) -> dict[str, Any]:
    """The user's config over the defaults, key by key, after validation."""
    merged = {**copy.deepcopy(dict(defaults)), **copy.deepcopy(dict(config or {}))}
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(CONFIG_SCHEMA).iter_errors(merged))
    if error is not None:
        if error.validator == "additionalProperties":
            allowed = ", ".join(sorted(error.schema.get("properties", {})))
            unknown = sorted(set(error.instance) - set(error.schema.get("properties", {})))
            raise ConfigError(f"config: at {error.json_path}: unknown key {unknown[0]!r} (allowed: {allowed})")
        raise ConfigError(f"config: at {error.json_path}: {error.message}")
    return merged


def merge_logging_fns(
    defaults: Mapping[str, Any], logging_fns: Mapping[str, Any] | None
) -> dict[str, tuple[Logger, ...]]:
    """The user's ``logging_fns`` over the defaults, event by event, each value checked
    to be a logger or a collection of loggers (a Logger subclass is instantiated)."""
    merged = {**defaults, **(logging_fns or {})}
    return {event: _loggers(event, value) for event, value in merged.items()}


def _loggers(event: str, value: Any) -> tuple[Logger, ...]:
    items = value if isinstance(value, (set, frozenset, list, tuple)) else [value]
    loggers = []
    for item in items:
        if isinstance(item, type) and issubclass(item, Logger):
            item = item()
        if not isinstance(item, Logger):
            raise ConfigError(
                f"logging_fns[{event!r}]: {item!r} is not a pypads logger "
                "(expected an instance of pypads.loggers.Logger or a set of them)"
            )
        loggers.append(item)
    return tuple(sorted(loggers, key=lambda logger: logger.name))


class EventTable:
    """From the hooks of an attribute to the handlers its calls must run."""

    def __init__(self, config: Mapping[str, Any], loggers: Mapping[str, tuple[Logger, ...]]) -> None:
        self._by_hook: dict[str, list[Handler]] = {}
        for event, spec in config["events"].items():
            if event not in loggers:
                known = ", ".join(sorted(loggers))
                raise ConfigError(f"config: at $.events.{event}: unknown event {event!r} (known events: {known})")
            options = spec.get("with", {})
            for logger in loggers[event]:
                if logger.name in config.get("disabled", ()):
                    continue
                merged = {**logger.options, **logger.check_options(options, f"config: at $.events.{event}.with")}
                for hook in spec["on"]:
                    self._by_hook.setdefault(hook, []).append(Handler(event, logger, merged))

    def handlers(self) -> list[Handler]:
        """Every handler once (a logger on several hooks of one event counts once)."""
        unique: dict[tuple[str, int], Handler] = {}
        for handlers in self._by_hook.values():
            for handler in handlers:
                unique.setdefault((handler.event, id(handler.logger)), handler)
        return list(unique.values())

    @functools.lru_cache(maxsize=None)
    def handlers_for(self, hooks: frozenset[str]) -> tuple[Handler, ...]:
        handlers: list[Handler] = []
        seen: set[tuple[str, int]] = set()
        for hook in sorted(hooks):
            for handler in self._by_hook.get(hook, ()):
                key = (handler.event, id(handler.logger))
                if key not in seen:
                    seen.add(key)
                    handlers.append(handler)
        return tuple(handlers)


