"""The one error callmonitor raises when reading a database."""

from __future__ import annotations

from pypads.errors import PyPadsError


class CallMonitorError(PyPadsError):
    """A database cannot be loaded, a record in it is malformed or unsafe (the message
    names the file and the record), a call asked for does not exist, or a replay is
    refused (and the message says what would allow it)."""
