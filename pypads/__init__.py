"""pypads: one line, ``PyPads()``, tracks scikit-learn (and any library with a mapping
file) into MLflow."""

from pypads.defaults import DEFAULT_CONFIG, DEFAULT_INIT_RUN_FNS, DEFAULT_LOGGING_FNS
from pypads.errors import ConfigError, LoggerFailure, LoggerWarning, MappingError, PyPadsError
from pypads.loggers import Logger, WriteFormats
from pypads.tracker import PyPads

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
    "WriteFormats",
]
