"""Loading call databases, getting calls back and replaying them.

A database is read as possibly hostile input (see ``untrusted.py``): metadata is
JSON checked against ``callmonitor.schema.json``, every file read lies inside the
database's folder, arrays load with ``allow_pickle=False``, and a malformed record is
one :class:`CallMonitorError` naming its file and record. A pickled value comes back
as a :class:`Pickled` placeholder unless ``load(..., allow_pickle=True)`` is asked
for, since unpickling runs code from whoever wrote the database. :meth:`DB.replay`
runs a function the caller passes, or one found by its recorded name only inside
modules the caller allows (``replaying.py``).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pypads.core import CallMonitorError
from pypads.recording.callmonitor.database import RUN_FOLDER
from pypads.recording.callmonitor.folder import CallRecord, read_database
from pypads.recording.callmonitor.replaying import find_function, unwrapped
from pypads.recording.callmonitor.untrusted import check
from pypads.recording.callmonitor.values import Pickled, Unsaved, Values
from pypads.to_mlflow import mlflow_connection

__all__ = ["DB", "Args", "CallMonitorError", "Pickled", "Replay", "Unsaved", "load"]

_RUN_ID = re.compile(r"^[0-9a-f]{32}$")
_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


@dataclass(frozen=True)
class Replay:
    """The outcome of running the original function again on recorded inputs."""

    result: Any
    recorded: Any
    matches: bool


class Args:
    """The arguments of one call by name (``args.x``), defaults filled in from the
    function's signature (keyword-only arguments included)."""

    def __init__(self, names: list[str], defaults: dict[str, Any], args: list[Any], kwargs: dict[str, Any]) -> None:
        values = dict(defaults)
        values.update(zip(names, args))
        values.update(kwargs)
        # Kept in a dict, not set as attributes: a name read from the database
        # ("__class__") must not replace this object's own attributes.
        self._values = {name: values[name] for name in names if name in values} | dict(kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(f"no argument {name!r} (arguments: {', '.join(self.__dict__['_values'])})") from None

    def __repr__(self) -> str:
        return repr(self._values.keys())

    __str__ = __repr__


class DB:
    """A loaded call database (read-only)."""

    def __init__(self, root: Path, allow_pickle: bool = False) -> None:
        self.root = Path(root).resolve()
        self.allow_pickle = allow_pickle
        self._values = Values(self.root, allow_pickle)
        self.functions = read_database(self.root)

    # --- finding calls ----------------------------------------------------------------
    def resolve(self, name: str) -> str:
        """The qualified name for ``name``, which may be a unique short name."""
        if name in self.functions:
            return name
        matches = [qualified for qualified in self.functions if qualified == name or qualified.endswith("." + name)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            known = ", ".join(sorted(self.functions)) or "none"
            raise CallMonitorError(f"no function {name!r} in {self.root} (recorded: {known})")
        raise CallMonitorError(f"{name!r} is ambiguous in {self.root}: {', '.join(sorted(matches))}")

    def calls(self, name: str) -> int:
        return len(self.functions[self.resolve(name)].calls)

    def _call(self, name: str, n: int) -> tuple[str, CallRecord]:
        qualified = self.resolve(name)
        calls = self.functions[qualified].calls
        if n not in calls:
            raise CallMonitorError(
                f"{qualified} has no call {n}: invocation counts start at 1 and it has {len(calls)} call(s)"
            )
        call = calls[n]
        if not call.checked:  # checked when first read: 100,000 records would take seconds at load
            check(call.record, "record", call.where)
            call.checked = True
        return qualified, call

    # --- getting values back ----------------------------------------------------------
    def get(self, name: str, n: int) -> tuple[list[Any], dict[str, Any]]:
        """``(args, kwargs)`` of call ``n`` (from 1) of function ``name``."""
        _, call = self._call(name, n)
        decode = self._values.decode
        args = [decode(item, call.folder, f"{call.where}: args[{index}]") for index, item in enumerate(call.record["args"])]
        kwargs = {key: decode(item, call.folder, f"{call.where}: kwargs[{key!r}]") for key, item in call.record["kwargs"].items()}
        return args, kwargs

    def get_args(self, name: str, n: int) -> Args:
        qualified, _ = self._call(name, n)
        function = self.functions[qualified]
        args, kwargs = self.get(name, n)
        return Args(function.info["args"], self._defaults(qualified), args, kwargs)

    def get_result(self, name: str, n: int) -> Any:
        """The recorded return value; raises :class:`CallMonitorError` if the call raised."""
        qualified, call = self._call(name, n)
        if "exception" in call.record:
            raised = call.record["exception"]
            raise CallMonitorError(f"call {n} of {qualified} raised {raised['type']}: {raised['message']}")
        if "result" not in call.record:
            raise CallMonitorError(f"{call.where}: a record with neither 'result' nor 'exception'")
        return self._values.decode(call.record["result"], call.folder, f"{call.where}: result")

    def replay(self, name: str, n: int, function: Callable[..., Any] | None = None, *,
               allow_modules: str | Iterable[str] = ()) -> Replay:
        """Run a function again on the recorded inputs of call ``n`` of ``name`` and
        compare its result with the recorded one.

        The function run is ``function`` if you pass it (for a method, the class's
        function, e.g. ``DecisionTreeClassifier.predict``: the recorded instance is the
        first argument). Otherwise it is the one the database names, imported only if
        its module is in ``allow_modules`` (a package allows its submodules):
        ``allow_modules=["sklearn"]``. A function defined in the recording script
        (``__main__``) must be passed. Every recorded input must have been loaded: a
        pickled one needs ``load(..., allow_pickle=True)``, for databases you trust.
        Wrappers (``@intercept``, pypads' tracking) are taken off, so a replay
        records nothing.
        """
        qualified, _ = self._call(name, n)
        # Without allow_pickle, reading the inputs runs nothing: their placeholders are
        # reported first. With it, the function is checked before anything is unpickled.
        chosen = None if not self.allow_pickle else self._replayed(qualified, n, function, allow_modules)
        args, kwargs, recorded = self._inputs(qualified, n)
        if chosen is None:
            chosen = self._replayed(qualified, n, function, allow_modules)
        result = chosen(*args, **kwargs)
        return Replay(result, recorded, _equal(result, recorded))

    def _replayed(self, qualified: str, n: int, function: Callable[..., Any] | None,
                  allow_modules: str | Iterable[str]) -> Callable[..., Any]:
        """The function a replay runs (see :meth:`replay`)."""
        if function is None:
            info = self.functions[qualified].info
            return find_function(info["module"], info["qualname"], _module_names(allow_modules), qualified, n)
        if not callable(function):
            raise TypeError(f"replay: function must be callable, not {type(function).__name__}")
        return unwrapped(function)

    def _inputs(self, qualified: str, n: int) -> tuple[list[Any], dict[str, Any], Any]:
        """Arguments and result of a call, refusing placeholders: running a function on
        one would fail in some unrelated way, or compare wrongly."""
        args, kwargs = self.get(qualified, n)
        recorded = self.get_result(qualified, n)
        labelled = [(f"argument {index}", value) for index, value in enumerate(args)]
        labelled += [(f"argument {key!r}", value) for key, value in kwargs.items()] + [("the result", recorded)]
        for label, value in labelled:
            _refuse_placeholder(qualified, n, label, value)
        return args, kwargs, recorded

    def _defaults(self, qualified: str) -> dict[str, Any]:
        where = f"{self.root / qualified / 'function.json'}: defaults"
        defaults = self.functions[qualified].info["defaults"]
        return {key: self._values.decode(item, None, f"{where}[{key!r}]") for key, item in defaults.items()}

    def __repr__(self) -> str:
        lines = ["{", "    Locked : True"]
        for qualified, function in sorted(self.functions.items()):
            short = qualified.rsplit(".", 1)[-1]
            shown = short if sum(q.rsplit(".", 1)[-1] == short for q in self.functions) == 1 else qualified
            try:
                defaults: Any = self._defaults(qualified) or None
            except CallMonitorError:  # a summary must not fail: the error comes when the value is asked for
                defaults = "<malformed>"
            lines += [f"    {shown} : {{", f"        calls : {len(function.calls)}",
                      f"        args : {function.info['args']}", f"        defaults : {defaults}", "    }"]
        lines.append("}")
        return "\n".join(lines)

    __str__ = __repr__


def load(source: str | Path, allow_pickle: bool = False, tracking_uri: str | None = None) -> DB:
    """Load a database from a local folder, an MLflow run id or a ``runs:/<id>/…`` URI.

    Loading reads JSON and ``.npy`` files only, all inside the database's folder.
    ``allow_pickle=True`` lets :meth:`DB.get` unpickle values that were pickled when
    recorded (estimators, for instance): only for databases you trust, since a pickle
    runs whatever code its writer chose.
    """
    text = str(source)
    if text.startswith("runs:/") or (_RUN_ID.match(text) and not Path(text).exists()):
        return DB(_download(text, tracking_uri), allow_pickle)
    return DB(Path(text).expanduser(), allow_pickle)


def _download(source: str, tracking_uri: str | None) -> Path:
    uri = source if source.startswith("runs:/") else f"runs:/{source}/{RUN_FOLDER}"
    target = Path(tempfile.mkdtemp(prefix="pypads-callmonitor-load-"))
    try:  # MLflow is imported at this first use: a script that records calls should not pay a second for it
        return mlflow_connection.download_artifacts(uri, target, tracking_uri)
    except Exception as error:
        raise CallMonitorError(f"cannot download a call database from {source}: {error}") from None


def _module_names(allow_modules: str | Iterable[str]) -> tuple[str, ...]:
    names = (allow_modules,) if isinstance(allow_modules, str) else tuple(allow_modules)
    for name in names:
        if not isinstance(name, str) or not _MODULE.match(name):
            raise ValueError(f"replay: allow_modules holds {name!r}, not a module name such as 'sklearn'")
    return names


def _refuse_placeholder(qualified: str, n: int, label: str, value: Any) -> None:
    """Raise if ``value`` stands for a value that was not loaded."""
    if isinstance(value, Pickled):
        raise CallMonitorError(
            f"cannot replay call {n} of {qualified}: {label} is a pickled {value.type}, which is loaded only with "
            f"load(..., allow_pickle=True) — unpickling runs code, so do that only for a database you trust")
    if isinstance(value, Unsaved):
        raise CallMonitorError(f"cannot replay call {n} of {qualified}: {label} ({value.type}) was not saved: {value.reason}")


def _equal(left: Any, right: Any) -> bool:
    try:
        if isinstance(left, np.ndarray) or isinstance(right, np.ndarray):
            return bool(np.array_equal(left, right))
        return bool(left == right)
    except Exception:
        return False
