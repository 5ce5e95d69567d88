"""Events: which loggers run for which hooks, as the config and ``logging_fns`` say.

A hook (``pypads_fit``) is what a mapping file attaches to an attribute; an event
(``parameters``) is what the config switches on for a set of hooks; loggers are what
``logging_fns`` attach to an event. This module holds an event as the config gives it
(:class:`Event`, built by :mod:`pypads.config`), checks ``logging_fns`` and the loggers'
options, and builds the table from a set of hooks to the handlers that must run.
"""

from __future__ import annotations

import copy
import difflib
import functools
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from pypads.core import ConfigError, Logger, LoggerOnEvent, MappingFile, OptionKind, check_option_kinds
from pypads.recording.content.serialize import WriteFormats
from pypads.recording.defaults import DEFAULT_CONFIG, DEFAULT_EVENT_DEPTHS
from pypads.recording.loggers.values import LAYOUTS


def merge_logging_fns(
    defaults: Mapping[str, Any], logging_fns: Mapping[str, Any] | None
) -> dict[str, tuple[Logger, ...]]:
    """The user's ``logging_fns`` over the defaults, event by event, each value checked
    to be a logger or a collection of loggers (a Logger subclass is instantiated)."""
    require_mapping("logging_fns", logging_fns, '{"output": Output(), "hardware": {Cpu(), Ram()}}')
    merged = {**defaults, **(logging_fns or {})}
    return {event: _loggers(event, value) for event, value in merged.items()}


def require_mapping(argument: str, value: Any, example: str) -> None:
    """Raise a ConfigError unless ``value`` (the argument ``argument``) is None or a mapping."""
    # A string or a list here would otherwise fail deep inside dict() with a raw error.
    if value is not None and not isinstance(value, Mapping):
        raise ConfigError(
            f"{argument}: expected a dict such as {example}, got {type(value).__name__} {_shown(value)}"
        )


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _whole_number(minimum: int) -> OptionKind:
    return f"a whole number >= {minimum}", lambda value: (
        isinstance(value, int) and not isinstance(value, bool) and value >= minimum
    )


_FLAG: OptionKind = ("True or False", lambda value: isinstance(value, bool))

# What each option of pypads' own loggers must be, checked at PyPads() so that a wrong
# kind (write_format="xml", max_bytes="big") fails there and not inside the first fit.
OPTION_KINDS: dict[str, OptionKind] = {
    "write_format": (
        " or ".join(repr(member.name) for member in WriteFormats),
        lambda value: isinstance(value, WriteFormats) or (isinstance(value, str) and value in WriteFormats.__members__),
    ),
    "max_bytes": _whole_number(0),
    "max_variants": _whole_number(0),
    "max_calls": _whole_number(0),
    "layout": (" or ".join(map(repr, LAYOUTS)), lambda value: value in LAYOUTS),
    "max_inline": _whole_number(0),
    "max_models": _whole_number(0),
    "max_datasets": _whole_number(0),
    "max_child_runs": _whole_number(0),
    "pipeline_type": ("'normal' or 'simple'", lambda value: value in ("normal", "simple")),
    "pipeline_args": _FLAG,
    "log_models": _FLAG,
    "log_datasets": _FLAG,
    "silent": _FLAG,
}


def _given_in(place: str, option: str) -> str:
    return place


def _option_of(place: str, option: str) -> str:
    return f"{place}.{option}"


def check_disabled(disabled: Iterable[str], run_loggers: Iterable[Any], loggers: Mapping[str, Iterable[Logger]]) -> None:
    """Raise a ConfigError for a name in the config's ``disabled`` that is neither a run
    function's nor a logger's of ``logging_fns``: a typo would switch nothing off."""
    known = {getattr(function, "name", getattr(function, "__name__", "")) for function in run_loggers}
    known |= {logger.name for event_loggers in loggers.values() for logger in event_loggers}
    for name in disabled:
        if name not in known:
            raise ConfigError(f"config: at $.disabled: unknown logger {name!r} (known: {', '.join(sorted(known))})")


def check_hooks(events: Mapping[str, Event], mappings: Iterable[MappingFile]) -> None:
    """Raise a ConfigError for a hook of ``events`` that neither a loaded mapping file nor
    pypads' own defaults define: a typo (``pypads_fitt``) would track nothing."""
    known = {rule.hook for file in mappings for entry in file.entries for rule in entry.rules}
    known |= {hook for spec in DEFAULT_CONFIG["events"].values() for hook in spec["on"]}
    for name, event in events.items():
        for index, hook in enumerate(event.hooks):
            if hook in known:
                continue
            close = difflib.get_close_matches(hook, sorted(known), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f" (known hooks: {', '.join(sorted(known))})"
            raise ConfigError(f"config: at $.events.{name}.on[{index}]: no mapping file defines the hook {hook!r}{hint}")


def _loggers(event: str, value: Any) -> tuple[Logger, ...]:
    items = value if isinstance(value, (set, frozenset, list, tuple)) else [value]
    loggers = []
    for item in items:
        if isinstance(item, type) and issubclass(item, Logger):
            item = item()
        if not isinstance(item, Logger):
            raise ConfigError(
                f"logging_fns[{event!r}]: {item!r} is not a pypads logger "
                "(expected an instance of pypads.recording.loggers.Logger or a set of them)"
            )
        loggers.append(item)
    return tuple(sorted(loggers, key=lambda logger: logger.name))


@dataclass(frozen=True)
class Event:
    """One event of the config: the hooks it is on, the options it gives its loggers
    (``with``), and how deeply nested a call they see (``depth``)."""

    hooks: tuple[str, ...]
    options: Mapping[str, Any] = field(default_factory=dict)
    depth: int = -1

    @classmethod
    def from_spec(cls, name: str, spec: Mapping[str, Any]) -> Event:
        """The event of a validated config entry: ``{"on": [...], "with": {...}, "depth": 0}``;
        without ``depth``, pypads' default for the event (``DEFAULT_EVENT_DEPTHS``)."""
        return cls(tuple(spec["on"]), MappingProxyType(copy.deepcopy(dict(spec.get("with", {})))),
                   int(spec.get("depth", DEFAULT_EVENT_DEPTHS.get(name, -1))))


class EventTable:
    """From the hooks of an attribute to the handlers its calls must run."""

    def __init__(self, events: Mapping[str, Event], loggers: Mapping[str, tuple[Logger, ...]],
                 disabled: Collection[str] = ()) -> None:
        self._by_hook: dict[str, list[LoggerOnEvent]] = {}
        self._for_hooks: dict[frozenset[str], tuple[LoggerOnEvent, ...]] = {}  # a cache per table, dropped with it
        for name, event in events.items():
            if name not in loggers:
                known = ", ".join(sorted(loggers))
                raise ConfigError(f"config: at $.events.{name}: unknown event {name!r} (known events: {known})")
            for logger in loggers[name]:
                if logger.name in disabled:
                    continue
                given = logger.check_options(event.options, f"config: at $.events.{name}.with")
                check_option_kinds(logger.options, OPTION_KINDS,
                                   functools.partial(_given_in, f"logging_fns[{name!r}]: {logger!r}"))
                check_option_kinds(given, OPTION_KINDS, functools.partial(_option_of, f"config: at $.events.{name}.with"))
                merged = {**logger.options, **given}
                handler = LoggerOnEvent(name, logger, merged, event.depth, before=type(logger).pre is not Logger.pre)
                for hook in event.hooks:
                    self._by_hook.setdefault(hook, []).append(handler)

    def handlers(self) -> list[LoggerOnEvent]:
        """Every handler once (a logger on several hooks of one event counts once)."""
        unique: dict[tuple[str, int], LoggerOnEvent] = {}
        for handlers in self._by_hook.values():
            for handler in handlers:
                unique.setdefault((handler.event, id(handler.logger)), handler)
        return list(unique.values())

    def handlers_for(self, hooks: frozenset[str]) -> tuple[LoggerOnEvent, ...]:
        """The handlers of a call that fires ``hooks``, each once (looked up once per set of hooks)."""
        found = self._for_hooks.get(hooks)
        if found is None:
            found = self._for_hooks[hooks] = self._collect(hooks)
        return found

    def _collect(self, hooks: frozenset[str]) -> tuple[LoggerOnEvent, ...]:
        handlers: list[LoggerOnEvent] = []
        seen: set[tuple[str, int]] = set()
        for hook in sorted(hooks):
            for handler in self._by_hook.get(hook, ()):
                key = (handler.event, id(handler.logger))
                if key not in seen:
                    seen.add(key)
                    handlers.append(handler)
        return tuple(handlers)


