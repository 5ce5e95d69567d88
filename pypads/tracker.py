"""``PyPads``: the one object a user creates. It wires the stages together:

mapping files → patcher (+ import hook) → call sites → event table → loggers → writer → MLflow.
"""

from __future__ import annotations

import importlib
import json
import os
import secrets
import sys
import traceback
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import mlflow
from loguru import logger
from mlflow.tracking import MlflowClient
from mlflow.tracking._tracking_service import utils as tracking_utils

from pypads.calls import CallSite, Session
from pypads.context import RunContext, active_run, set_active_run
from pypads.defaults import DEFAULT_CONFIG, DEFAULT_INIT_RUN_FNS, DEFAULT_LOGGING_FNS
from pypads.errors import ConfigError
from pypads.events import EventTable, merge_config, merge_logging_fns
from pypads.lifecycle import FAILED, FINISHED, KILLED, ExitHooks
from pypads.mapping import MappingFile, load_mappings
from pypads.patching.importer import PatchingFinder
from pypads.provenance import pypads_version
from pypads.patching.patches import Patcher
from pypads.run_loggers import RunLogger, RunSettings
from pypads.store import Store, default_experiment_name, ensure_experiment, pypads_home, resolve_store
from pypads.journal import Journal
from pypads.writer import Writer, recover

RunFunction = Callable[["PyPads"], None]

_active: PyPads | None = None  # patches are process-wide: one tracker at a time


class PyPads:
    """Track every mapped library call of this process into an MLflow run.

    Creating it validates the config and the mapping files (raising one clear error for
    bad input, before anything is patched), starts an MLflow run — or joins the active
    one — and patches the mapped libraries, whether they are imported before or after.

    Args:
        uri: MLflow tracking URI. Defaults to ``$MLFLOW_TRACKING_URI`` (or a URI set with
            ``mlflow.set_tracking_uri``), then ``$MLFLOW_PATH`` (a folder or a URI), then
            a SQLite store in ``~/.pypads`` (``$PYPADS_HOME``).
        name: MLflow experiment name; defaults to the script's name.
        mapping_paths: extra mapping files to use.
        mapping: a mapping document (the JSON of a mapping file, as a dict) to use.
        init_run_fns: callables run once with this tracker when the run starts.
        include_default_mappings: use the mapping files shipped with pypads.
        logging_fns: ``{event: logger}`` or ``{event: {logger, …}}``, over the defaults.
        config: ``{"events": …, "recursion_identity": …, "recursion_depth": …,
            "log_on_failure": …}``; each given key replaces the default one.
        reload_modules: re-import the affected modules that were imported before.
        reload_warnings: say which mapped modules were imported before and patched in place.
        clear_imports: drop the affected modules from ``sys.modules`` so that their next
            import loads them afresh.
        affected_modules: the module names ``reload_modules``/``clear_imports`` act on;
            defaults to every loaded module of a mapped library.
    """

    def __init__(
        self,
        uri: str | None = None,
        name: str | None = None,
        mapping_paths: Iterable[str | Path] | None = None,
        mapping: Mapping[str, Any] | None = None,
        init_run_fns: Iterable[RunFunction] | None = None,
        include_default_mappings: bool = True,
        logging_fns: Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
        reload_modules: bool = False,
        reload_warnings: bool = True,
        clear_imports: bool = False,
        affected_modules: Iterable[str] | None = None,
    ) -> None:
        # Everything that can be wrong with the input is checked before anything changes.
        self.config = merge_config(DEFAULT_CONFIG, config)
        self.events = EventTable(self.config, merge_logging_fns(DEFAULT_LOGGING_FNS, logging_fns))
        self.mappings: list[MappingFile] = load_mappings(mapping_paths or (), mapping, include_default_mappings)
        self.init_run_fns = _check_run_functions(DEFAULT_INIT_RUN_FNS if init_run_fns is None else init_run_fns)
        _check_disabled(self.config["disabled"], self.init_run_fns, merge_logging_fns(DEFAULT_LOGGING_FNS, logging_fns))

        global _active
        if _active is not None:
            warnings.warn("a previous PyPads was still active: ending its run and deactivating it", stacklevel=2)
            _active.deactivate()

        self.store: Store = _store_for(uri)
        self.experiment_name = name or default_experiment_name()
        self.session = Session(self.config["recursion_depth"], self.config["recursion_identity"])
        self._client: MlflowClient | None = None
        self._previous_uri: str | None = None
        self._changed_uri = False
        self._owns_run = False
        self._exit_hooks = ExitHooks(self._end_at_exit)
        _recover_left_behind()
        self._start_run()

        entries = [entry for file in self.mappings for entry in file.entries]
        self._patcher = Patcher(entries, self._make_site)
        self._prepare_imports(clear_imports, reload_modules, reload_warnings, affected_modules)
        self._finder = PatchingFinder(self._patcher.is_watched, self._patcher.on_module_loaded)
        self._finder.install()
        self._patcher.patch_loaded()
        _active = self
        self._run_init_functions()

    # --- the run ----------------------------------------------------------------------
    @property
    def run_id(self) -> str | None:
        """The id of the MLflow run being tracked (``None`` once it ended)."""
        run = self.session.run
        return run.run_id if run is not None else None

    @property
    def writer(self) -> Writer | None:
        """The writer of the current run, for logging extra values the same batched way."""
        run = self.session.run
        return run.writer if run is not None else None

    def _start_run(self) -> None:
        try:
            active = mlflow.active_run()
            if active is None:
                self._previous_uri = _explicit_mlflow_uri()
                self._changed_uri = True
                mlflow.set_tracking_uri(self.store.tracking_uri)
            self._client = MlflowClient(self.store.tracking_uri)
            if active is not None:
                run_id = active.info.run_id
            else:
                experiment_id = ensure_experiment(self._client, self.store, self.experiment_name)
                run_id = mlflow.start_run(experiment_id=experiment_id).info.run_id
                self._owns_run = True
        except Exception as error:  # tracking must never stop the user's script
            warnings.warn(f"pypads could not start an MLflow run at {self.store.tracking_uri}: {error}; "
                          "continuing without tracking", stacklevel=3)
            return
        writer = Writer(self._client, run_id, Journal.create(run_id, self.store.tracking_uri))
        writer.set_tags({"pypads.version": pypads_version(), "pypads.mappings": self._mapping_summary()})
        self.session.run = RunContext(run_id, writer, tuple(self.mappings))
        set_active_run(self.session.run)
        self._exit_hooks.install()

    def end_run(self, status: str = FINISHED) -> None:
        """Flush everything and end the run; when this returns, all data is in MLflow.

        Calls of tracked code go on working afterwards, untracked.
        """
        run = self.session.run
        if run is None:
            return
        self.session.run = None
        if active_run() is run:
            set_active_run(None)
        self._exit_hooks.uninstall()
        run.ending()
        run.writer.close()
        if not self._owns_run or self._client is None:
            return
        active = mlflow.active_run()
        if active is not None and active.info.run_id == run.run_id:
            mlflow.end_run(status)
        else:
            self._client.set_terminated(run.run_id, status)

    def _end_at_exit(self, status: str, failure: str | None) -> None:
        run = self.session.run
        if failure and run is not None and self.config["log_on_failure"]:
            run.writer.log_text("failure/traceback.txt", failure)
        self.end_run(status)

    def _run_init_functions(self) -> None:
        run = self.session.run
        if run is None:
            return
        for handler in self.events.handlers():
            try:
                handler.logger.start(run, handler.options)
            except Exception as error:
                run.logger_failed(handler.logger.name, "run start", error)
        settings = RunSettings.from_config(self.config, _salt())
        for function in self.init_run_fns:
            name = function.name if isinstance(function, RunLogger) else getattr(function, "__name__", repr(function))
            if name in self.config["disabled"]:
                continue
            try:
                if isinstance(function, RunLogger):
                    function.log(run, settings)
                else:
                    function(self)
            except Exception as error:
                run.logger_failed(name, "run start", error)

    # --- patching ---------------------------------------------------------------------
    def _make_site(self, attribute: str, hooks: frozenset[str], bound_to: str) -> CallSite:
        return CallSite(self.session, attribute, hooks, self.events.handlers_for(hooks), bound_to)

    def _prepare_imports(
        self, clear: bool, reload: bool, warn: bool, affected: Iterable[str] | None
    ) -> None:
        libraries = self._patcher.libraries()
        loaded = sorted(name for name in sys.modules if name.split(".")[0] in libraries)
        if (clear or reload) and affected is None:
            # Classes are patched in place, so nothing needs re-importing; re-importing a
            # whole library behind the user's back would orphan the objects they hold
            # (isinstance checks against BaseEstimator would fail). Only named modules are.
            warnings.warn("clear_imports/reload_modules act on affected_modules only; none given, "
                          "so nothing was cleared or reloaded (modules imported earlier are patched in place)",
                          stacklevel=4)
            return
        names = list(affected or ())
        if clear:
            for name in names:
                sys.modules.pop(name, None)
        elif reload:
            for name in names:
                module = sys.modules.get(name)
                if module is not None:
                    try:
                        importlib.reload(module)
                    except Exception as error:
                        warnings.warn(f"pypads could not reload {name}: {error}", stacklevel=4)
        elif warn and loaded:
            logger.info(
                "pypads: {} module(s) of {} were imported before PyPads() and are patched in place",
                len(loaded), ", ".join(sorted(libraries)),
            )

    @property
    def affected_modules(self) -> list[str]:
        """The mapped targets that have been patched so far."""
        return list(self._patcher.patched_modules)

    def deactivate(self) -> None:
        """End the run (if still open) and restore every patched attribute to the
        identical original object."""
        global _active
        self.end_run()
        self._finder.uninstall()
        self._patcher.restore()
        if self._changed_uri:
            # set_tracking_uri also exported MLFLOW_TRACKING_URI to child processes: undo both.
            mlflow.set_tracking_uri(self._previous_uri)  # type: ignore[arg-type]  # None unsets it
            self._changed_uri = False
        if _active is self:
            _active = None

    def __enter__(self) -> PyPads:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is None:
            self._end_at_exit(FINISHED, None)
        else:
            status = KILLED if issubclass(kind, KeyboardInterrupt) else FAILED
            self._end_at_exit(status, "".join(traceback.format_exception(kind, error, tb)))
        self.deactivate()

    def _mapping_summary(self) -> str:
        return json.dumps([
            {"file": Path(file.source).name, "library": file.library, "mapping_version": str(file.mapping_version)}
            for file in self.mappings
        ])


def _stop_tracking_in_forked_child() -> None:
    # The child inherits the run but not the writer's thread: its calls would queue
    # forever. It runs untracked; its exit cannot end the parent's run (ExitHooks).
    if _active is not None:
        _active.session.run = None
    set_active_run(None)


os.register_at_fork(after_in_child=_stop_tracking_in_forked_child)


def _recover_left_behind() -> None:
    """Upload what earlier, killed processes left in their journals."""
    try:
        for run_id in recover():
            logger.info("pypads: recovered the journal of run {} left by a process that died", run_id)
    except Exception as error:
        warnings.warn(f"pypads could not recover a journal left by an earlier process: {error}", stacklevel=3)


def _check_run_functions(functions: Iterable[RunLogger | RunFunction]) -> list[RunLogger | RunFunction]:
    checked = list(functions)
    for function in checked:
        if not isinstance(function, RunLogger) and not callable(function):
            raise ConfigError(f"init_run_fns: {function!r} is neither a RunLogger nor callable")
    return checked


def _check_disabled(disabled: Iterable[str], run_functions: Iterable[Any], loggers: Mapping[str, Iterable[Any]]) -> None:
    known = {getattr(function, "name", getattr(function, "__name__", "")) for function in run_functions}
    known |= {logger.name for event_loggers in loggers.values() for logger in event_loggers}
    for name in disabled:
        if name not in known:
            raise ConfigError(f"config: at $.disabled: unknown logger {name!r} (known: {', '.join(sorted(known))})")


def _salt() -> str:
    """A random salt kept in PYPADS_HOME, so pseudonyms are stable on this machine
    and cannot be reversed by hashing guesses elsewhere."""
    path = pypads_home() / "salt"
    try:
        return path.read_text()
    except OSError:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_hex(16))
        return path.read_text()


def _store_for(uri: str | None) -> Store:
    """The store to track into. An active MLflow run is joined in its own store; a
    ``uri`` naming another store then is a contradiction, refused."""
    if mlflow.active_run() is None:
        return resolve_store(uri or _explicit_mlflow_uri())
    current = mlflow.get_tracking_uri()
    if uri is not None and resolve_store(uri).tracking_uri != resolve_store(current).tracking_uri:
        raise ConfigError(
            f"uri: an MLflow run is active in {current}; pypads joins it there and cannot track into {uri}"
        )
    return resolve_store(current)


def _explicit_mlflow_uri() -> str | None:
    """A tracking URI the user set (environment or ``mlflow.set_tracking_uri``)."""
    is_set = getattr(tracking_utils, "is_tracking_uri_set", None)
    return mlflow.get_tracking_uri() if callable(is_set) and is_set() else None


