"""What is recorded, the fourth floor: the loggers of tracked calls, the run loggers
that describe the run once, the call-recording database, and the event table that ties
mapping hooks to loggers (with pypads' defaults)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pypads.core import lazy_names

if TYPE_CHECKING:
    from pypads.recording.callmonitor import (
        CONTEXT,
        DB,
        REGISTRY,
        Args,
        CallMonitorError,
        CallRecorder,
        Handler,
        NPHandler,
        Pickled,
        RecordingWarning,
        Registry,
        Replay,
        Settings,
        Unsaved,
        intercept,
        load,
    )
    from pypads.recording.callmonitor.database import RUN_FOLDER
    from pypads.recording.content.serialize import WriteFormats
    from pypads.recording.defaults import DEFAULT_CONFIG, DEFAULT_INIT_RUN_FNS, DEFAULT_LOGGING_FNS
    from pypads.recording.events import Event, EventTable, check_disabled, check_hooks, merge_logging_fns, require_mapping
    from pypads.recording.narrator import logger
    from pypads.recording.provenance import pypads_version
    from pypads.recording.run_loggers import RunSettings
    from pypads.recording.run_loggers.base import RunLogger
    from pypads.recording.run_loggers.system import login_name, write_system_facts

# Where each name lives: its module is imported when the name is first used.
_HOMES = {
    "pypads.recording.callmonitor": (
        "Args CallMonitorError CallRecorder CONTEXT DB Handler intercept load "
        "NPHandler Pickled RecordingWarning REGISTRY Registry Replay Settings "
        "Unsaved"
    ),
    "pypads.recording.callmonitor.database": "RUN_FOLDER",
    "pypads.recording.content.serialize": "WriteFormats",
    "pypads.recording.defaults": "DEFAULT_CONFIG DEFAULT_INIT_RUN_FNS DEFAULT_LOGGING_FNS",
    "pypads.recording.events": "check_disabled check_hooks Event EventTable merge_logging_fns require_mapping",
    "pypads.recording.narrator": "logger",
    "pypads.recording.provenance": "pypads_version",
    "pypads.recording.run_loggers": "RunSettings",
    "pypads.recording.run_loggers.base": "RunLogger",
    "pypads.recording.run_loggers.system": "login_name write_system_facts",
}

__all__ = [
    "Args", "CONTEXT", "CallMonitorError", "CallRecorder", "DB", "DEFAULT_CONFIG", "DEFAULT_INIT_RUN_FNS",
    "DEFAULT_LOGGING_FNS", "Event", "EventTable", "Handler", "NPHandler", "Pickled", "REGISTRY", "RUN_FOLDER",
    "RecordingWarning", "Registry", "Replay", "RunLogger", "RunSettings", "Settings", "Unsaved", "WriteFormats",
    "check_disabled", "check_hooks", "intercept", "load", "logger", "login_name", "merge_logging_fns", "pypads_version",
    "require_mapping", "write_system_facts"
]

__getattr__ = lazy_names(__name__, _HOMES)
