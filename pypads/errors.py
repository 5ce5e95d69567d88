"""The errors and warnings pypads raises, in one place so that users can catch them."""

from __future__ import annotations


class PyPadsError(Exception):
    """Base class of every error raised by pypads itself (never by the tracked code)."""


class MappingError(PyPadsError):
    """A mapping file is malformed: it names the file, the JSON path and what is wrong."""

    def __init__(self, source: str, json_path: str, problem: str) -> None:
        self.source = source
        self.json_path = json_path
        self.problem = problem
        super().__init__(f"{source}: at {json_path}: {problem}")


class ConfigError(PyPadsError):
    """The ``config``, ``logging_fns`` or another argument of ``PyPads()`` is invalid."""


class LoggerFailure(PyPadsError):
    """Raised instead of a warning when a logger fails in strict mode (``PYPADS_STRICT=1``)."""


class LoggerWarning(UserWarning):
    """A logger failed; the tracked call went on unharmed. Issued once per logger and run."""
