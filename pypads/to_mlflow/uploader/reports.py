"""How the uploader reports what did not reach MLflow: a warning in the script, once per kind."""

from __future__ import annotations

from collections.abc import Callable

from pypads.core import redact_text, warn

Warn = Callable[[str, str], None]
"""Reports a failure: ``(key, message)``."""


class WriterWarning(UserWarning):
    """The writer could not store something in MLflow."""


def warn_locally(key: str, message: str) -> None:
    """Warn in this process (the script's), credentials taken out."""
    # MLflow's errors quote the URI they failed on, credentials and all.
    warn(redact_text(message), WriterWarning, stacklevel=3)


class OncePerKey:
    """A warning function that reports each key once."""

    def __init__(self, warn: Warn) -> None:
        self._warn = warn
        self._seen: set[str] = set()

    def __call__(self, key: str, message: str) -> None:
        if key not in self._seen:
            self._seen.add(key)
            self._warn(key, message)

