"""Loading call databases, getting calls back and replaying them.

Loading is safe by default: metadata is JSON and arrays load with
``allow_pickle=False``. A value that was pickled comes back as a :class:`Pickled`
placeholder unless ``load(..., allow_pickle=True)`` is asked for, since unpickling
runs code from whoever wrote the database.
"""

from __future__ import annotations

import importlib
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cloudpickle
import numpy as np

from pypads.callmonitor.database import RUN_FOLDER
from pypads.callmonitor.handlers import REGISTRY
from pypads.callmonitor.records import FORMAT, untag
from pypads.errors import PyPadsError

_RUN_ID = re.compile(r"^[0-9a-f]{32}$")


class CallMonitorError(PyPadsError):
    """A database cannot be loaded, or a call asked for does not exist."""


@dataclass(frozen=True)
class Pickled:
    """A pickled value, not loaded: ``load(..., allow_pickle=True)`` loads it."""

    type: str
    file: str


@dataclass(frozen=True)
class Unsaved:
    """A value that could not be saved, and why."""

    type: str
    reason: str


@dataclass(frozen=True)
class Replay:
    """The outcome of running the original function again on recorded inputs."""

    result: Any
    recorded: Any
    matches: bool


class Args:
    """The arguments of one call by name, defaults filled in from the function's
    signature (keyword-only arguments included)."""

    def __init__(self, names: list[str], defaults: dict[str, Any], args: list[Any], kwargs: dict[str, Any]) -> None:
        values = dict(defaults)
        values.update(zip(names, args))
        values.update(kwargs)
        for name in names:
            if name in values:
                setattr(self, name, values[name])
        for name, value in kwargs.items():
            setattr(self, name, value)

    def __repr__(self) -> str:
        return repr(self.__dict__.keys())

    __str__ = __repr__


@dataclass
class _Function:
    info: dict[str, Any]
    calls: dict[int, tuple[dict[str, Any], Path | None]]


class DB:
    """A loaded call database (read-only)."""

    def __init__(self, root: Path, allow_pickle: bool = False) -> None:
        self.root = root
        self.allow_pickle = allow_pickle
        self.functions = _read_database(root)

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

    def _record(self, name: str, n: int) -> tuple[str, dict[str, Any], Path | None]:
        qualified = self.resolve(name)
        calls = self.functions[qualified].calls
        if n not in calls:
            raise CallMonitorError(
                f"{qualified} has no call {n}: invocation counts start at 1 and it has {len(calls)} call(s)"
            )
        record, folder = calls[n]
        return qualified, record, folder

    # --- getting values back ----------------------------------------------------------
    def get(self, name: str, n: int) -> tuple[list[Any], dict[str, Any]]:
        """``(args, kwargs)`` of call ``n`` (from 1) of function ``name``."""
        _, record, folder = self._record(name, n)
        args = [self._value(item, folder) for item in record["args"]]
        kwargs = {key: self._value(item, folder) for key, item in record["kwargs"].items()}
        return args, kwargs

    def get_args(self, name: str, n: int) -> Args:
        qualified, _, _ = self._record(name, n)
        info = self.functions[qualified].info
        args, kwargs = self.get(name, n)
        defaults = {key: self._value(item, None) for key, item in info.get("defaults", {}).items()}
        return Args(info.get("args", []), defaults, args, kwargs)

    def get_result(self, name: str, n: int) -> Any:
        """The recorded return value; raises :class:`CallMonitorError` if the call raised."""
        qualified, record, folder = self._record(name, n)
        if "exception" in record:
            raised = record["exception"]
            raise CallMonitorError(f"call {n} of {qualified} raised {raised['type']}: {raised['message']}")
        return self._value(record["result"], folder)

    def replay(self, name: str, n: int) -> Replay:
        """Run the original (unwrapped) function on the recorded inputs and compare."""
        qualified, _, _ = self._record(name, n)
        info = self.functions[qualified].info
        function: Any = importlib.import_module(info["module"])
        for part in info["qualname"].split("."):
            function = getattr(function, part)
        while hasattr(function, "__wrapped__"):
            function = function.__wrapped__
        args, kwargs = self.get(name, n)
        recorded = self.get_result(name, n)
        result = function(*args, **kwargs)
        return Replay(result, recorded, _equal(result, recorded))

    def _value(self, item: dict[str, Any], folder: Path | None) -> Any:
        kind = item["kind"]
        if kind == "json":
            return untag(item["value"])
        if kind == "numpy_scalar":
            return np.dtype(item["dtype"]).type(item["value"])
        if kind == "numpy":
            return np.load(self.root / "objects" / item["object"], allow_pickle=False)
        if kind == "handler":
            handler_class = REGISTRY.by_name(item["handler"])
            if handler_class is None:
                raise CallMonitorError(f"no handler {item['handler']} in REGISTRY: add it before loading values")
            handler = handler_class(item["target"])
            handler.load(str(folder))
            return handler.data
        if kind == "pickle":
            if not self.allow_pickle or folder is None:
                return Pickled(item["type"], item["file"])
            with open(folder / item["file"], "rb") as stream:
                return cloudpickle.load(stream)
        return Unsaved(item.get("type", "?"), item.get("reason", ""))

    def __repr__(self) -> str:
        lines = ["{", "    Locked : True"]
        for qualified, function in sorted(self.functions.items()):
            short = qualified.rsplit(".", 1)[-1]
            shown = short if sum(q.rsplit(".", 1)[-1] == short for q in self.functions) == 1 else qualified
            defaults = function.info.get("defaults") or None
            if defaults is not None:
                defaults = {key: self._value(value, None) for key, value in defaults.items()}
            lines += [f"    {shown} : {{", f"        calls : {len(function.calls)}",
                      f"        args : {function.info.get('args', [])}", f"        defaults : {defaults}", "    }"]
        lines.append("}")
        return "\n".join(lines)

    __str__ = __repr__


def load(source: str | Path, allow_pickle: bool = False, tracking_uri: str | None = None) -> DB:
    """Load a database from a local folder, an MLflow run id or a ``runs:/<id>/…`` URI."""
    text = str(source)
    if text.startswith("runs:/") or (_RUN_ID.match(text) and not Path(text).exists()):
        return DB(_download(text, tracking_uri), allow_pickle)
    return DB(Path(text).expanduser().resolve(), allow_pickle)


def _download(source: str, tracking_uri: str | None) -> Path:
    uri = source if source.startswith("runs:/") else f"runs:/{source}/{RUN_FOLDER}"
    target = Path(tempfile.mkdtemp(prefix="pypads-callmonitor-load-"))
    # Imported here: a script that records calls should not pay a second for MLflow.
    import mlflow.artifacts

    try:
        return Path(mlflow.artifacts.download_artifacts(artifact_uri=uri, dst_path=str(target), tracking_uri=tracking_uri))
    except Exception as error:
        raise CallMonitorError(f"cannot download a call database from {source}: {error}") from None


def _read_database(root: Path) -> dict[str, _Function]:
    meta = root / "db.json"
    if not root.is_dir():
        raise CallMonitorError(f"{root} is not a folder")
    try:
        header = json.loads(meta.read_text())
    except (OSError, ValueError) as error:
        raise CallMonitorError(f"{root} is not a call database: cannot read db.json ({error})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise CallMonitorError(f"{root} is not a call database of format {FORMAT} (db.json: {str(header)[:200]})")
    functions = {}
    for folder in sorted(path for path in root.iterdir() if path.is_dir() and path.name != "objects"):
        functions[folder.name] = _read_function(folder)
    return functions


def _read_function(folder: Path) -> _Function:
    try:
        info = json.loads((folder / "function.json").read_text())
    except (OSError, ValueError) as error:
        raise CallMonitorError(f"{folder}: cannot read function.json ({error})") from None
    calls: dict[int, tuple[dict[str, Any], Path | None]] = {}
    for lines in sorted(folder.glob("calls*.jsonl")):
        text = lines.read_text()
        rows = text.split("\n")
        for index, row in enumerate(rows):
            if not row:
                continue
            try:
                record = json.loads(row)
            except ValueError:
                if index == len(rows) - 1:  # a line torn by a kill: the call never finished
                    continue
                raise CallMonitorError(f"{lines}: line {index + 1} is not a JSON record") from None
            calls[int(record["n"])] = (record, None)
    for call_folder in folder.iterdir():
        if call_folder.is_dir() and call_folder.name.isdigit():
            try:
                record = json.loads((call_folder / "record.json").read_text())
            except (OSError, ValueError) as error:
                raise CallMonitorError(f"{call_folder}: cannot read record.json ({error})") from None
            calls[int(call_folder.name)] = (record, call_folder)
    return _Function(info, dict(sorted(calls.items())))


def _equal(left: Any, right: Any) -> bool:
    try:
        if isinstance(left, np.ndarray) or isinstance(right, np.ndarray):
            return bool(np.array_equal(left, right))
        return bool(left == right)
    except Exception:
        return False
