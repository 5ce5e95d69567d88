"""The seed's import path: ``from pypads.base import PyPads``."""

from pypads.recording.defaults import DEFAULT_CONFIG, DEFAULT_INIT_RUN_FNS, DEFAULT_LOGGING_FNS
from pypads.recording.loggers import WriteFormats
from pypads.tracker import PyPads

__all__ = ["DEFAULT_CONFIG", "DEFAULT_INIT_RUN_FNS", "DEFAULT_LOGGING_FNS", "PyPads", "WriteFormats"]
