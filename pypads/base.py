"""The seed's import path: ``from pypads.base import PyPads``."""

from pypads.recording import DEFAULT_CONFIG, DEFAULT_INIT_RUN_FNS, DEFAULT_LOGGING_FNS, WriteFormats
from pypads.tracker import PyPads

__all__ = ["DEFAULT_CONFIG", "DEFAULT_INIT_RUN_FNS", "DEFAULT_LOGGING_FNS", "PyPads", "WriteFormats"]
