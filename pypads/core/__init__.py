"""The call core, the ground floor: what a tracked call is, the logger contract, the
patches and the import hook that put calls through them, and the mapping files that say
which calls matter.

It imports nothing of the floors above (``tests/unit/test_layout.py`` checks it), so a
library can be patched without loading the loggers, the run or the way to MLflow.

This module is the floor's face: the floors above import the floor from here, never
from its modules.
"""

from pypads.core.call import Call
from pypads.core.calls import (
    CallSite,
    Session,
    inside_pypads,
    pypads_at_work,
    set_tracking_session,
    tracked_run,
    tracking_session,
)
from pypads.core.errors import (
    PASSES_THROUGH_LOGGERS,
    CallMonitorError,
    ConfigError,
    LoggerFailure,
    LoggerWarning,
    MappingError,
    PyPadsError,
    RecordingWarning,
    ResultsError,
    say_on_stderr,
    warn,
)
from pypads.core.estimators import cut_in_the_middle, init_defaults, is_estimator, params, short_repr, writes_scikit_learns_repr
from pypads.core.home import pypads_home
from pypads.core.logger import Logger, LoggerOnEvent, OptionKind, check_option_kinds
from pypads.core.mapping import (
    CallReading,
    DataReading,
    EvalSets,
    HookRule,
    MappingEntry,
    MappingFile,
    Recorder,
    Source,
    load_mappings,
    read_mapping_file,
)
from pypads.core.mapping.files import check_loaded_entries, describe_unmatched, installed, installed_version
from pypads.core.mapping.targets import loaded_subclasses, resolve_loaded, unmatched_patterns, why_missing
from pypads.core.patching.dispatch import unregister
from pypads.core.patching.importer import PatchingFinder, prepare_imports
from pypads.core.patching.patches import Patcher
from pypads.core.privacy import (
    REDACTED,
    SECRET_WORDS,
    is_secret_name,
    redact,
    redact_argv,
    redact_params,
    redact_repr,
    redact_text,
    redact_url,
)
from pypads.core.processes import is_multiprocessing_child, launcher_job, launcher_rank
from pypads.core.pseudonyms import load_salt, pseudonym
from pypads.core.schemas import (
    CALLMONITOR,
    PIPELINE_GRAPH,
    SYSTEM,
    VALUE_SUMMARY,
    most_relevant_error,
    schema_error,
    validate,
    validator,
)

__all__ = [
    "CALLMONITOR", "Call", "CallMonitorError", "CallReading", "DataReading", "EvalSets", "Recorder", "Source",
    "CallSite", "ConfigError", "HookRule", "Logger", "LoggerFailure",
    "LoggerOnEvent", "LoggerWarning", "MappingEntry", "MappingError", "MappingFile", "OptionKind", "PASSES_THROUGH_LOGGERS",
    "PIPELINE_GRAPH", "Patcher", "PatchingFinder", "PyPadsError", "REDACTED", "RecordingWarning", "ResultsError",
    "SECRET_WORDS", "SYSTEM", "Session", "VALUE_SUMMARY", "check_loaded_entries", "check_option_kinds", "cut_in_the_middle",
    "describe_unmatched", "init_defaults", "inside_pypads", "installed",
    "installed_version", "is_estimator", "is_multiprocessing_child", "launcher_job", "launcher_rank",
    "is_secret_name", "load_mappings", "load_salt", "loaded_subclasses", "most_relevant_error", "params", "prepare_imports",
    "pseudonym", "pypads_at_work", "pypads_home", "read_mapping_file", "redact", "redact_argv", "redact_params",
    "redact_repr", "redact_text", "redact_url", "resolve_loaded", "say_on_stderr", "schema_error", "set_tracking_session",
    "short_repr", "tracked_run", "tracking_session", "unmatched_patterns", "unregister", "validate", "validator", "warn",
    "why_missing", "writes_scikit_learns_repr"
]
