"""pypads: one line, ``PyPads()``, tracks scikit-learn (and any library with a mapping
file) into MLflow.

The names below are loaded when first used: ``import pypads.core`` (the call core) must
not load the floors above it, and Python imports this module before any of its floors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pypads.core import lazy_names

if TYPE_CHECKING:
    from pypads.core import ConfigError, Logger, LoggerFailure, LoggerWarning, MappingError, PyPadsError
    from pypads.recording import DEFAULT_CONFIG, DEFAULT_INIT_RUN_FNS, DEFAULT_LOGGING_FNS, RunLogger, WriteFormats
    from pypads.tracker import PyPads

# Where each public name lives: its module is imported when the name is first used.
_HOMES = {
    "pypads.core.errors": "ConfigError LoggerFailure LoggerWarning MappingError PyPadsError",
    "pypads.core.logger": "Logger",
    "pypads.recording.content.serialize": "WriteFormats",
    "pypads.recording.defaults": "DEFAULT_CONFIG DEFAULT_INIT_RUN_FNS DEFAULT_LOGGING_FNS",
    "pypads.recording.run_loggers.base": "RunLogger",
    "pypads.tracker": "PyPads",
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


__getattr__ = lazy_names(__name__, _HOMES)
