"""``PyPads``: the one object a user creates. It wires the stages together:

mapping files → patcher (+ import hook) → call sites → event table → loggers → writer → MLflow.
"""

from __future__ import annotations

import os
import threading
import traceback
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from pypads import to_mlflow
from pypads.config import Config
from pypads.core import (
    CallReading,
    CallSite,
    MappingFile,
    Patcher,
    PatchingFinder,
    Session,
    launcher_job,
    load_mappings,
    prepare_imports,
    pypads_home,
    set_tracking_session,
    tracking_session,
    unregister,
    warn,
)
from pypads.recording import (
    DEFAULT_INIT_RUN_FNS,
    DEFAULT_LOGGING_FNS,
    EventTable,
    RunLogger,
    check_disabled,
    check_hooks,
    logger,
    merge_logging_fns,
    pypads_version,
)
from pypads.run import FAILED, FINISHED, KILLED, Environment, ExitHooks, RunContext, Writer, store_for
from pypads.startup import RunLoggerFunction, check_run_loggers, is_worker_process, mapping_summary, run_user, start_run_loggers


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
        init_run_fns: run loggers (``RunLogger``) and functions, run once when the run
            starts (a function is called with this tracker).
        include_default_mappings: use the mapping files shipped with pypads.
        logging_fns: ``{event: logger}`` or ``{event: {logger, …}}``, over the defaults.
        config: ``{"events": …, "recursion_identity": …, "recursion_depth": …,
            "log_on_failure": …}``; each given key replaces the default one.
        reload_modules: re-import the affected modules that were imported before.
        reload_warnings: say which mapped modules were imported before and patched in place.
        clear_imports: drop the affected modules from ``sys.modules`` (imported afresh next).
        affected_modules: the module names ``reload_modules``/``clear_imports`` act on;
            defaults to every loaded module of a mapped library.
    """

    def __init__(
        self,
        uri: str | None = None,
        name: str | None = None,
        mapping_paths: Iterable[str | Path] | None = None,
        mapping: Mapping[str, Any] | None = None,
        init_run_fns: Iterable[RunLogger | RunLoggerFunction] | None = None,
        include_default_mappings: bool = True,
        logging_fns: Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
        reload_modules: bool = False,
        reload_warnings: bool = True,
        clear_imports: bool = False,
        affected_modules: Iterable[str] | None = None,
    ) -> None:
        # Everything that can be wrong with the input is checked before anything changes.
        # Each argument on its own first, then how they fit together.
        self.config = Config.build(config)
        logging_fns_merged = merge_logging_fns(DEFAULT_LOGGING_FNS, logging_fns)
        self.init_run_fns = check_run_loggers(DEFAULT_INIT_RUN_FNS if init_run_fns is None else init_run_fns)
        self.mappings: list[MappingFile] = load_mappings(mapping_paths or (), mapping, include_default_mappings)
        check_disabled(self.config.disabled, self.init_run_fns, logging_fns_merged)
        check_hooks(self.config.events, self.mappings)
        self.events = EventTable(self.config.events, logging_fns_merged, self.config.disabled)

        previous = in_charge()
        if previous is not None:
            warn("a previous PyPads was still active: ending its run and deactivating it", stacklevel=2)
            previous.deactivate()

        # session.run: the run calls are tracked into (None once tracking stops, a full
        # disk, say); _run: the run to end, until it ends. Patches are process-wide, so one
        # tracker is in charge at a time: the one whose session the core holds.
        self.session = Session(self.config.recursion_depth, self.config.recursion_identity, tracker=self)
        self._run: RunContext | None = None
        self._environment = Environment()  # MLflow's variables, while the run lasts
        self._previous_mlflow_uri: str | None = None
        self._set_mlflow_uri = False
        self._exit_hooks = ExitHooks(self._end_at_exit)
        self._run_loggers: threading.Thread | None = None
        self._sites: list[CallSite] = []
        entries = [entry for file in self.mappings for entry in file.entries]
        self._patcher = Patcher(entries, self._make_site)
        self._finder = PatchingFinder(self._patcher.is_watched, self._patcher.on_module_loaded)
        self.experiment_name = name or to_mlflow.default_experiment_name()
        if is_worker_process():
            # A worker that re-ran the script's top level (spawn, forkserver, loky) runs
            # untracked. Trace: loguru's default sink prints debug into the user's stderr.
            logger.trace("pypads: not tracking in a worker process of {}", os.getppid())
            self._owns_run = False
            return

        joined = to_mlflow.active_mlflow_run_id()
        self.store: to_mlflow.Store = store_for(uri, joined)
        self._owns_run = joined is None
        set_tracking_session(self.session)  # callmonitor's intercepts go to the run from its start
        try:
            self._start_run(joined)
            libraries = self._patcher.libraries()
            imported = prepare_imports(libraries, clear_imports, reload_modules, affected_modules)
            if reload_warnings and imported:
                logger.info("pypads: {} module(s) of {} were imported before PyPads() and are patched in place",
                            len(imported), ", ".join(sorted(libraries)))
            self._finder.install()
            self._patcher.patch_loaded()
        except BaseException:
            set_tracking_session(None)  # a PyPads() that could not start is in charge of nothing
            raise
        self._start_run_loggers()

    # --- the run ----------------------------------------------------------------------
    @property
    def run_id(self) -> str | None:
        """The id of the MLflow run being tracked (``None`` once it ended).

        The run is opened off the script's thread; asking for its id waits until it exists.
        """
        run = self._run
        return run.run_id if run is not None else None

    @property
    def writer(self) -> Writer | None:
        """The writer of the current run, for logging extra values the same batched way."""
        run = self._run
        return run.writer if run is not None else None

    def _start_run(self, joined: str | None) -> None:
        """Start tracking at once; the MLflow run itself is opened by the uploader (an MPI
        rank's: rank 0's, or a child run of it). Each part is handed what it needs, going
        down: the writer makes the run's journal and starts its uploader. If the script
        imported MLflow before ``PyPads()``, it may use MLflow's API right away: then this
        waits for the run to be open and makes it MLflow's active run in this thread."""
        config = self.config
        user = run_user(config.pseudonymize)
        tags = {"pypads.version": pypads_version(), "pypads.mappings": mapping_summary(self.mappings)}
        uses_mlflow = to_mlflow.script_uses_mlflow()
        if self._owns_run:
            self._environment.set(MLFLOW_TRACKING_URI=self.store.tracking_uri)
        target = to_mlflow.RunTarget(self.store, self.experiment_name, joined, user, None if joined else launcher_job())
        writer = Writer(target, on_open=self._on_run_open,
                        in_process=config.uploader == "thread" or (config.uploader == "auto" and uses_mlflow),
                        recover=bool(to_mlflow.left_behind()), on_failure=self._stop_tracking,
                        wait_timeout=config.flush_timeout, uploader_idle=config.uploader_idle)
        run = RunContext(writer, tuple(self.mappings))
        try:
            writer.start(tags)
        except OSError as error:  # tracking must never stop the user's script
            warn(f"pypads cannot keep a journal in {pypads_home()}: {error}; continuing without tracking", stacklevel=3)
        else:
            self.session.run = self._run = run
            self._exit_hooks.install()
        if uses_mlflow and self._owns_run:
            # MLflow prefers a URI set in-process over the environment.
            self._previous_mlflow_uri = to_mlflow.explicit_mlflow_uri()
            self._set_mlflow_uri = True
            to_mlflow.set_mlflow_tracking_uri(self.store.tracking_uri)
            if self._run is not None:  # the script may use MLflow's API at once (see above)
                to_mlflow.activate_run(writer.run_id, self.store.display_uri)

    def _on_run_open(self, run_id: str) -> None:
        # MLflow's fluent API (mlflow.log_metric…) in any thread of this process, and in
        # child processes, resumes this run instead of starting one of its own.
        if self._owns_run:
            self._environment.set(MLFLOW_RUN_ID=run_id)

    def end_run(self, status: str = FINISHED) -> None:
        """Flush everything and end the run; when this returns, all data is in MLflow —
        or, if MLflow left a call unanswered for ``config["flush_timeout"]`` seconds (by
        default 5 for a tracking server, 60 for a store on this machine), in the
        local journal, which the next ``PyPads()`` uploads (a warning says so).

        Calls of tracked code go on working afterwards, untracked.
        """
        run = self._run
        if run is None:
            return
        self._run = None
        self._stop_tracking()
        self._exit_hooks.uninstall()
        timeout = self.config.flush_timeout or to_mlflow.default_timeout(run.writer.target.store)
        if self._run_loggers is not None:
            # Local work only (git, system, packages); first, as they may register
            # callbacks for the run's end (the hardware sampler stops in one).
            self._run_loggers.join(self.config.flush_timeout or to_mlflow.SERVER_TIMEOUT)
        run.ending()
        closed = run.writer.close(status if self._owns_run else None, timeout=timeout)
        self._environment.restore("MLFLOW_RUN_ID")
        if closed and self._owns_run and to_mlflow.script_uses_mlflow() and run.writer.is_open and run.writer.run_id is not None:
            to_mlflow.mlflow_connection.end_fluent_run(run.writer.run_id, status)

    def _stop_tracking(self) -> None:
        """Calls go on untracked from now on (the run ends, or its journal cannot be written)."""
        self.session.run = None

    def _end_at_exit(self, status: str, failure: str | None) -> None:
        run = self._run
        if failure and run is not None and self.config.log_on_failure:
            run.writer.log_text("failure/traceback.txt", failure)
        self.end_run(status)

    def _start_run_loggers(self) -> None:
        run, config = self._run, self.config
        if run is not None:
            self._run_loggers = start_run_loggers(self, run, self.events, self.init_run_fns, config.disabled,
                                                    config.env_allowlist, config.pseudonymize)

    # --- patching ---------------------------------------------------------------------
    def _make_site(self, attribute: str, hooks: frozenset[str], reading: CallReading | None, bound_to: str) -> CallSite:
        site = CallSite(self.session, attribute, hooks, self.events.handlers_for(hooks), bound_to, reading)
        self._sites.append(site)
        return site

    @property
    def affected_modules(self) -> list[str]:
        """The mapped targets that have been patched so far."""
        return list(self._patcher.patched_modules)

    def deactivate(self) -> None:
        """End the run (if still open) and restore every patched attribute to the
        identical original object."""
        self.end_run()
        self._finder.uninstall()
        self._patcher.restore()
        # Wrappers that stay where restore cannot reach (a class pickled meanwhile) call
        # the original from now on.
        unregister([site.key for site in self._sites if site.key is not None])
        self._sites.clear()
        if self._set_mlflow_uri:
            # set_tracking_uri(None) unsets it in MLflow and in the environment.
            to_mlflow.set_mlflow_tracking_uri(self._previous_mlflow_uri)
            self._set_mlflow_uri = False
        self._environment.restore()
        if in_charge() is self:
            set_tracking_session(None)
        self.session.tracker = None  # a wrapper that outlives restore() keeps the session, not this

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


def _stop_tracking_in_forked_child() -> None:
    # The child inherits the run but not the writer's thread: its calls would queue
    # forever. It runs untracked; its exit cannot end the parent's run (ExitHooks).
    tracker = in_charge()
    if tracker is not None:
        tracker.session.run = tracker._run = None


def in_charge() -> PyPads | None:
    """The PyPads in charge of this process' patches, if any."""
    session = tracking_session()
    return session.tracker if session is not None and isinstance(session.tracker, PyPads) else None


os.register_at_fork(after_in_child=_stop_tracking_in_forked_child)
