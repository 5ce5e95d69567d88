"""Values of a record, decoded without running anything the database chose.

JSON values are rebuilt as they were; arrays are read from ``objects/`` with
``allow_pickle=False`` after their header is checked against the file's size;
values of a registered handler type are loaded by that handler (never by a class the
record names); pickled values stay :class:`Pickled` placeholders unless the database
was loaded with ``allow_pickle=True``.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import cloudpickle
import numpy as np

from pypads.core import CallMonitorError
from pypads.recording.callmonitor.handlers import REGISTRY
from pypads.recording.callmonitor.records import untag
from pypads.recording.callmonitor.untrusted import check_tree, open_regular, plain_name

_SCALAR_KINDS = "biuf"  # the numpy scalars the recorder stores inline


@dataclass(frozen=True)
class Pickled:
    """A pickled value, not loaded: ``load(..., allow_pickle=True)`` loads it (only
    for databases you trust: unpickling runs code chosen by whoever wrote it)."""

    type: str
    file: str


@dataclass(frozen=True)
class Unsaved:
    """A value that could not be saved, and why."""

    type: str
    reason: str


class Values:
    """Decodes the values of records of the database in ``root`` (a real path)."""

    def __init__(self, root: Path, allow_pickle: bool) -> None:
        self.root = root
        self.allow_pickle = allow_pickle

    def decode(self, item: Any, folder: Path | None, where: str) -> Any:
        """The value ``item`` describes; ``folder`` is the call's own folder (None for
        a call kept in a JSON Lines file); ``where`` names the value in errors."""
        if not isinstance(item, dict) or not isinstance(item.get("kind"), str):
            raise CallMonitorError(f"{where}: not a value (an object with a 'kind'): {str(item)[:100]}")
        decoder = getattr(self, f"_{item['kind']}", None)
        if decoder is None:
            raise CallMonitorError(f"{where}: unknown kind of value {item['kind']!r}")
        return decoder(item, folder, where)

    def _json(self, item: dict[str, Any], folder: Path | None, where: str) -> Any:
        try:
            return untag(_field(item, "value", object, where))
        except (ValueError, RecursionError) as error:
            raise CallMonitorError(f"{where}: malformed JSON value ({error})") from None

    def _numpy_scalar(self, item: dict[str, Any], folder: Path | None, where: str) -> Any:
        value = _field(item, "value", (bool, int, float), where)
        try:
            dtype = np.dtype(_field(item, "dtype", str, where))
            if dtype.kind not in _SCALAR_KINDS:
                raise TypeError(f"dtype {dtype} is not a number")
            return dtype.type(value)
        except (TypeError, ValueError, OverflowError) as error:
            raise CallMonitorError(f"{where}: malformed numpy scalar ({error})") from None

    def _numpy(self, item: dict[str, Any], folder: Path | None, where: str) -> np.ndarray:
        name = plain_name(_field(item, "object", str, where), where, "object")
        with open_regular(self.root, self.root / "objects" / name, where) as stream:
            return _read_array(stream, f"{where}: objects/{name}")

    def _handler(self, item: dict[str, Any], folder: Path | None, where: str) -> Any:
        target = _field(item, "target", str, where)
        if not (target.isidentifier() or target.isdigit()):
            # the handler builds its file names from the label: it must not hold a path
            raise CallMonitorError(f"{where}: handler target {target!r} is not an argument's label")
        name = _field(item, "handler", str, where)
        handler_class = REGISTRY.by_name(name)
        if handler_class is None:
            raise CallMonitorError(f"{where}: no handler {name} in REGISTRY: add it before loading values")
        handler = handler_class(target)
        own = _own_folder(folder, where)
        check_tree(self.root, own, where)  # the handler opens its files itself, unchecked
        try:
            handler.load(str(own))
        except Exception as error:  # the user's handler, on files that may be anything
            raise CallMonitorError(f"{where}: {name}.load failed: {error!r}") from error
        return handler.data

    def _pickle(self, item: dict[str, Any], folder: Path | None, where: str) -> Any:
        name = plain_name(_field(item, "file", str, where), where, "file")
        own = _own_folder(folder, where)
        if not self.allow_pickle:
            return Pickled(_field(item, "type", str, where), name)
        with open_regular(self.root, own / name, where) as stream:
            try:
                return cloudpickle.load(stream)
            except Exception as error:  # whatever the pickled code raises
                raise CallMonitorError(f"{where}: cannot unpickle {name}: {error!r}") from error

    def _unsaved(self, item: dict[str, Any], folder: Path | None, where: str) -> Unsaved:
        return Unsaved(str(item.get("type", "?")), str(item.get("reason", "")))


def _field(item: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in item:
        raise CallMonitorError(f"{where}: a {item['kind']} value without {key!r}")
    value = item[key]
    if not isinstance(value, kind):
        raise CallMonitorError(f"{where}: {key!r} of a {item['kind']} value is {type(value).__name__}, not {_names(kind)}")
    return value


def _names(kind: type | tuple[type, ...]) -> str:
    return " or ".join(entry.__name__ for entry in (kind if isinstance(kind, tuple) else (kind,)))


def _own_folder(folder: Path | None, where: str) -> Path:
    if folder is None:
        raise CallMonitorError(f"{where}: a value kept in files, in a call that has no folder")
    return folder


def _read_array(stream: BinaryIO, where: str) -> np.ndarray:
    """The array of a ``.npy`` file, never unpickling, and never allocating more than
    the file holds (a header may announce a terabyte)."""
    try:
        version = np.lib.format.read_magic(stream)
        # 3.0 differs from 2.0 only in the header's text encoding: read as 2.0, its
        # shape and item size (all the size check needs) come out right.
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = read_header(stream)
        announced = math.prod(shape) * dtype.itemsize
        held = os.fstat(stream.fileno()).st_size - stream.tell()
        if announced > held:
            raise ValueError(f"its header announces {announced} bytes of data, the file holds {held}")
        stream.seek(0)
        array = np.lib.format.read_array(stream, allow_pickle=False)
    except (ValueError, EOFError, OSError, TypeError, SyntaxError) as error:  # what numpy raises on a foreign file
        raise CallMonitorError(f"{where}: not a .npy file that loads without pickle ({error})") from None
    return array
