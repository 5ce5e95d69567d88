"""``pypads run train.py [args…]``: the script runs as with ``python train.py args…``,
with ``PyPads()`` started in front of it.

The script's ``sys.argv``, ``sys.path[0]``, ``__file__`` and ``__name__ == "__main__"``
are those ``python`` gives it, so its argument parsing, imports of modules beside it,
tracebacks and line numbers are its own. Its exit status is too: ``sys.exit(n)`` keeps
``n``; an uncaught exception prints the script's traceback (without pypads' frames),
ends the run FAILED and exits with status 1.
"""

from __future__ import annotations

import argparse
import json
import runpy
import sys
from pathlib import Path
from types import TracebackType
from typing import Any

from pypads.cli import CliError

DESCRIPTIONS = {
    "run": "Run a Python script as `python SCRIPT ARGS...` would, tracked as if its first line were "
           "PyPads(). Options go before the script's name; everything after it goes to the script. "
           "The exit status is the script's.",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--uri", help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI, then $MLFLOW_PATH, "
                                      "then the store in $PYPADS_HOME or ~/.pypads)")
    parser.add_argument("--experiment", metavar="NAME", help="experiment name (default: the script's name)")
    parser.add_argument("--mapping", metavar="FILE", action="append", default=[],
                        help="an extra mapping file to use (repeatable)")
    parser.add_argument("--no-default-mappings", action="store_true",
                        help="use only the mapping files given with --mapping")
    parser.add_argument("--config", metavar="JSON",
                        help="PyPads' config: a JSON object, or the path of a .json file holding one")
    parser.add_argument("--record-calls", action="store_true",
                        help="also record the script's own fit, predict, transform and metric calls into the "
                             "run's call database (the `calls` event; see `pypads calls`)")
    parser.add_argument("script", help="the Python script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")


def main(options: argparse.Namespace) -> int:
    script = Path(options.script)
    if not script.is_file():
        raise CliError(f"{options.script}: no such script file")
    config = _config(options.config)
    if options.record_calls:
        config = with_calls_recorded(config)
    path = str(script.resolve())
    # What `python train.py args` sets up; done before PyPads(), whose uploader takes the
    # script's sys.path and whose run is tagged with sys.argv[0].
    sys.argv = [options.script, *options.args]
    sys.path[0] = str(Path(path).parent)
    _start_tracking(options, config, script.stem)
    try:
        runpy.run_path(path, run_name="__main__")
    except (SystemExit, KeyboardInterrupt):
        raise  # Python's own exit: status kept; Ctrl-C ends the run KILLED and the process by SIGINT
    except BaseException as error:  # noqa: BLE001 - every other exception ends the script as python would
        # Python's hook prints the exception's own __traceback__: trimmed there, not only passed.
        error.__traceback__ = _script_frames(error.__traceback__, path)
        # sys.excepthook is pypads' (it ends the run FAILED with this traceback), then Python's.
        sys.excepthook(type(error), error, error.__traceback__)
        return 1
    return 0


def _config(text: str | None) -> dict[str, Any] | None:
    """``--config``: JSON text, or the path of a file holding it."""
    if text is None:
        return None
    source = "--config"
    if not text.lstrip().startswith("{"):
        try:
            text, source = Path(text).read_text(encoding="utf-8"), text
        except OSError as error:
            raise CliError(f"--config {text}: neither a JSON object nor a readable file ({error.strerror})") from None
    try:
        config = json.loads(text)
    except json.JSONDecodeError as error:
        raise CliError(f"{source}: malformed JSON at line {error.lineno}, column {error.colno}: {error.msg}") from None
    if not isinstance(config, dict):
        raise CliError(f"{source}: the config must be a JSON object, not {type(config).__name__}")
    return config


def with_calls_recorded(config: dict[str, Any] | None) -> dict[str, Any]:
    """``config`` with the `calls` event on for the script's own calls, beside its
    other events (a config's ``events`` replaces the default ones as a whole)."""
    from pypads.recording import DEFAULT_CONFIG

    config = dict(config or {})
    events = dict(config.get("events", DEFAULT_CONFIG["events"]))
    events["calls"] = {"on": RECORDED_HOOKS, "depth": 0}
    config["events"] = events
    return config


RECORDED_HOOKS = ["pypads_fit", "pypads_predict", "pypads_transform", "pypads_metric"]


def _start_tracking(options: argparse.Namespace, config: dict[str, Any] | None, stem: str) -> None:
    """``PyPads(...)`` with the command's options; bad input is one error line, exit 1."""
    from pypads.core import PyPadsError
    from pypads.tracker import PyPads

    global _tracker
    try:
        # Kept in a global so that the tracker lives as long as the process, as a
        # script's `tracker = PyPads()` would.
        _tracker = PyPads(uri=options.uri, name=options.experiment or stem, config=config,
                          mapping_paths=options.mapping, include_default_mappings=not options.no_default_mappings)
    except PyPadsError as error:
        raise CliError(str(error)) from None


_tracker: Any = None


def _script_frames(tb: TracebackType | None, path: str) -> TracebackType | None:
    """The traceback from the script's first frame on, as ``python script.py`` prints it.

    An error before the script ran a line (a SyntaxError) has no frame of the script:
    then every frame of pypads and runpy goes, and the error's own file and line remain.
    """
    first = tb
    while first is not None and first.tb_frame.f_code.co_filename != path:
        first = first.tb_next
    if first is not None:
        return first
    ours = {__file__, runpy.__file__, "<frozen runpy>"}
    while tb is not None and tb.tb_frame.f_code.co_filename in ours:
        tb = tb.tb_next
    return tb
