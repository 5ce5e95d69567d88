"""pypads: one line, ``PyPads()``, tracks scikit-learn (and any library with a mapping
file) into MLflow.

The names below are loaded when first used: ``import pypads.core`` (the call core) must
not load the floors above it, and Python imports this module before any of its floors.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pypads.core import ConfigError, Logger, LoggerFailure, LoggerWarning, MappingError, PyPadsError
    from pypads.recording import DEFAULT_CONFIG, DEFAULT_INIT_RUN_FNS, DEFAULT_LOGGING_FNS, RunLogger, WriteFormats
    from pypads.tracker import PyPads

# Where each public name lives: its floor's face (the tracker is on the top floor).
_HOMES = {
    "DEFAULT_CONFIG": "pypads.recording",
    "DEFAULT_INIT_RUN_FNS": "pypads.recording",
    "DEFAULT_LOGGING_FNS": "pypads.recording",
    "ConfigError": "pypads.core",
    "Logger": "pypads.core",
    "LoggerFailure": "pypads.core",
    "LoggerWarning": "pypads.core",
    "MappingError": "pypads.core",
    "PyPads": "pypads.tracker",
    "PyPadsError": "pypads.core",
    "RunLogger": "pypads.recording",
    "WriteFormats": "pypads.recording",
}

__all__ = [
    "DEFAULT_CONFIG",
    "DEFAULT_INIT_RUN_FNS",
    "DEFAULT_LOGGING_FNS",
    "ConfigError",
    "Logger",
    "LoggerFailure",
    "LoggerWarning",
    "MappingError",
    "PyPads",
    "PyPadsError",
    "RunLogger",
    "WriteFormats",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'pypads' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # once found, a plain attribute: no lookup on later uses
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
