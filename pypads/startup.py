"""What ``PyPads()`` does besides opening the run: it checks the run loggers it is to run,
says what the run is started with (its user, the mapping files' tag), and runs the
run loggers (and the loggers' start) once the run exists."""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Any

from pypads.core import REDACTED, ConfigError, MappingFile, is_multiprocessing_child, load_salt, pseudonym, pypads_home
from pypads.recording import EventTable, RunLogger, RunSettings, login_name, write_system_facts
from pypads.run import RunContext

RunLoggerFunction = Callable[[Any], None]
"""A run logger written as a function: called once with the tracker (a ``PyPads``) when
the run starts."""


def check_run_loggers(functions: Iterable[RunLogger | RunLoggerFunction]) -> list[RunLogger | RunLoggerFunction]:
    checked = list(functions)
    for function in checked:
        if not isinstance(function, RunLogger) and not callable(function):
            raise ConfigError(f"init_run_fns: {function!r} is neither a RunLogger nor callable")
    return checked


def run_logger_name(function: RunLogger | RunLoggerFunction) -> str:
    return function.name if isinstance(function, RunLogger) else getattr(function, "__name__", repr(function))


def mapping_summary(mappings: Iterable[MappingFile]) -> str:
    """The mapping files in use, for the run's ``pypads.mappings`` tag, as a person
    reads them: ``sklearn_1.json 1.0.0`` (file and mapping version), comma-separated."""
    return ", ".join(f"{Path(file.source).name} {file.mapping_version}" for file in mappings) or "none"


def is_worker_process() -> bool:
    """Whether this process is a worker that ``multiprocessing`` (any start method),
    ``concurrent.futures`` or joblib started; spawned ones re-run the script's top
    level as ``__mp_main__``."""
    # While a spawned worker re-runs the script, runpy names the module being run
    # "__mp_main__"; in the parent that name is an alias of "__main__".
    rerun = any(getattr(sys.modules.get(name), "__name__", None) == "__mp_main__" for name in ("__mp_main__", "__main__"))
    return rerun or is_multiprocessing_child()


def start_run_loggers(tracker: Any, run: RunContext, events: EventTable, functions: Iterable[RunLogger | RunLoggerFunction],
                        disabled: Collection[str], env_allowlist: tuple[str, ...], pseudonymize: bool) -> threading.Thread | None:
    """Start the event loggers, then run the run loggers not ``disabled``: those that may
    run in the background on a thread, which is returned (``end_run`` waits for it).
    ``env_allowlist`` and ``pseudonymize`` are what the run loggers are told (the config's).
    The run calls each (:meth:`RunContext.call_safely`): a failure never reaches the script."""
    settings = RunSettings(env_allowlist, pseudonymize, load_salt(pypads_home()))
    calls = [(run_logger_name(function), _call(function, tracker, run, settings), _in_background(function))
             for function in functions if run_logger_name(function) not in disabled]
    for handler in events.handlers():
        run.call_safely(handler.logger.name, "run start", functools.partial(handler.logger.start, run, handler.options))
    for name, call, in_background in calls:
        if not in_background:
            run.call_safely(name, "run start", call)
    write_facts = functools.partial(write_system_facts, run)  # environment/system.json, from what the loggers found
    if not any(in_background for _, _, in_background in calls):
        run.call_safely("ISystem", "run start", write_facts)
        return None

    def run_in_background() -> None:
        for name, call, in_background in calls:
            if in_background:
                run.call_safely(name, "run start", call)
        run.call_safely("ISystem", "run start", write_facts)

    # Git, system and package facts take a tenth of a second and touch only the
    # writer: the script need not wait for them. end_run does.
    thread = threading.Thread(target=run_in_background, name="pypads-run-loggers", daemon=True)
    thread.start()
    return thread


def _call(function: RunLogger | RunLoggerFunction, tracker: Any, run: RunContext, settings: RunSettings) -> Callable[[], Any]:
    if isinstance(function, RunLogger):
        return functools.partial(function.log, run, settings)
    return functools.partial(function, tracker)


def _in_background(function: RunLogger | RunLoggerFunction) -> bool:
    return isinstance(function, RunLogger) and function.in_background


def run_user(pseudonymize: bool) -> str | None:
    """A new run's ``mlflow.user``: None (MLflow's, the login name), or with
    ``pseudonymize`` the login name's pseudonym, as ``environment/system.json`` has it."""
    if not pseudonymize:
        return None
    user = login_name()
    if user is None:
        return REDACTED
    try:
        return pseudonym(user, load_salt(pypads_home()))
    except OSError:  # no salt to be had: the name must still not be logged
        return REDACTED
