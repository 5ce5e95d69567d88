"""What is recorded, the fourth floor: the loggers of tracked calls, the run loggers
that describe the run once, the call-recording database, and the event table that ties
mapping hooks to loggers (with pypads' defaults).

This module is the floor's face: the floors above import the floor from here, never
from its modules.
"""

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

__all__ = [
    "Args", "CONTEXT", "CallMonitorError", "CallRecorder", "DB", "DEFAULT_CONFIG", "DEFAULT_INIT_RUN_FNS",
    "DEFAULT_LOGGING_FNS", "Event", "EventTable", "Handler", "NPHandler", "Pickled", "REGISTRY", "RUN_FOLDER",
    "RecordingWarning", "Registry", "Replay", "RunLogger", "RunSettings", "Settings", "Unsaved", "WriteFormats",
    "check_disabled", "check_hooks", "intercept", "load", "logger", "login_name", "merge_logging_fns", "pypads_version",
    "require_mapping", "write_system_facts"
]
