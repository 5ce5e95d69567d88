"""pypads: one line, ``PyPads()``, tracks scikit-learn (and any library with a mapping
file) into MLflow.

The names below are loaded when first used: ``import pypads.core`` (the call core) must
not load the floors above it, and Python imports this module before any of its floors.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pypads.core.errors import ConfigError, LoggerFailure, LoggerWarning, MappingError, PyPadsError
    from pypads.core.logger import Logger
    from pypads.recording.content.serialize import WriteFormats
    from pypads.recording.defaults import DEFAULT_CONFIG, DEFAULT_INIT_RUN_FNS, DEFAULT_LOGGING_FNS
    from pypads.recording.run_loggers.base import RunLogger
    from pypads.tracker import PyPads

# Where each public name lives.
_HOMES = {
    "DEFAULT_CONFIG": "pypads.recording.defaults",
    "DEFAULT_INIT_RUN_FNS": "pypads.recording.defaults",
    "DEFAULT_LOGGING_FNS": "pypads.recording.defaults",
    "ConfigError": "pypads.core.errors",
    "Logger": "pypads.core.logger",
    "LoggerFailure": "pypads.core.errors",
    "LoggerWarning": "pypads.core.errors",
    "MappingError": "pypads.core.errors",
    "PyPads": "pypads.tracker",
    "PyPadsError": "pypads.core.errors",
    "RunLogger": "pypads.recording.run_loggers.base",
    "WriteFormats": "pypads.recording.content.serialize",
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
