"""A call as a record: JSON metadata plus the files its values need.

Small JSON-safe values live inside the record; numpy arrays are stored once per
content (``objects/<blake3>.npy``, see ``npy.py``); values of a registered handler
type are saved by their handler into the call's folder; anything else is pickled (and only unpickled
on explicit request); what cannot be saved at all is described instead. Nothing
here ever raises into the recorded call.
"""

from __future__ import annotations

import inspect
import json
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cloudpickle
import numpy as np

from pypads.core import REDACTED, is_secret_name, redact, redact_repr
from pypads.recording.callmonitor.handlers import Handler, NPHandler, Registry

FORMAT = "pypads-callmonitor/1"
INLINE_LIMIT = 4096  # bytes of JSON above which a value is not kept inside the record
_SCALARS = (bool, int, float, str, type(None))


@dataclass
class Encoded:
    """A record and what must be stored beside it."""

    record: dict[str, Any]
    files: dict[str, bytes] = field(default_factory=dict)
    """Files of the call's own folder (pickles)."""
    handlers: list[Handler] = field(default_factory=list)
    """Custom handlers that write their own files into the call's folder."""

    @property
    def needs_folder(self) -> bool:
        return bool(self.files or self.handlers or self.record.get("links"))


class RecordEncoder:
    """Turns values into record entries.

    Args:
        registry: the handlers for values of custom types.
        store_array: stores a numpy array under ``objects/`` (once per content) and
            returns its file name there. Arrays are stored while the call is encoded,
            so an argument is saved as it was before the call.
    """

    def __init__(self, registry: Registry, store_array: Callable[[np.ndarray], str]) -> None:
        self.registry = registry
        self.store_array = store_array

    def call(self, number: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Encoded:
        encoded = Encoded({"n": number})
        encoded.record["args"] = [self.value(value, str(index), encoded) for index, value in enumerate(args)]
        encoded.record["kwargs"] = {key: self.value(REDACTED if is_secret_name(key) else value, key, encoded)
                                    for key, value in kwargs.items()}
        return encoded

    def outcome(self, encoded: Encoded, result: Any, error: BaseException | None, duration: float) -> None:
        encoded.record["duration"] = duration
        if error is not None:
            encoded.record["exception"] = {"type": type(error).__qualname__, "message": redact_repr(str(error)),
                                           "traceback": redact_repr("".join(traceback.format_exception(error))[-4000:])}
        else:
            encoded.record["result"] = self.value(result, "result", encoded)

    def value(self, value: Any, label: str, encoded: Encoded) -> dict[str, Any]:
        """The entry for ``value``, with its secrets redacted (:func:`pypads.core.privacy.redact`:
        the value under a secret key at any depth, an estimator's secret params), in its
        pickle too: a replay sees ``***`` where the call saw the secret."""
        try:
            return self._value(redact(value), label, encoded)
        except Exception as error:  # a value that cannot be saved never breaks the call
            return {"kind": "unsaved", "type": _type_name(value), "reason": f"{type(error).__name__}: {error}"}

    def _value(self, value: Any, label: str, encoded: Encoded) -> dict[str, Any]:
        inline = _inline(value)
        if inline is not None:
            return inline
        if isinstance(value, np.generic) and value.dtype.kind in "biuf":
            return {"kind": "numpy_scalar", "dtype": str(value.dtype), "value": value.item()}
        handler = self.registry.handler_for(value)
        if handler is NPHandler:  # the built-in one: stored once per content
            name = self.store_array(value)
            encoded.record.setdefault("links", {})[f"arg_{label}.npy"] = name
            return {"kind": "numpy", "object": name, "shape": list(value.shape), "dtype": str(value.dtype)}
        if handler is not None:
            instance = handler(label, value)
            encoded.handlers.append(instance)
            return {"kind": "handler", "handler": f"{handler.__module__}.{handler.__qualname__}", "target": label}
        content = cloudpickle.dumps(value)
        encoded.files[f"arg_{label}.pickle"] = content
        return {"kind": "pickle", "file": f"arg_{label}.pickle", "type": _type_name(value)}


def _inline(value: Any) -> dict[str, Any] | None:
    """A JSON form that loads back as an equal value of the same type, if small."""
    def plain(item: Any) -> bool:
        if isinstance(item, _SCALARS):
            return type(item) in _SCALARS  # not numpy scalars or bool subclasses
        if type(item) in (list, tuple):
            return all(plain(element) for element in item)
        if type(item) is dict:
            return all(type(key) is str and plain(element) for key, element in item.items())
        return False

    if not plain(value):
        return None
    try:
        text = json.dumps(_tag(value), allow_nan=True)
    except (TypeError, ValueError):
        return None
    return {"kind": "json", "value": json.loads(text)} if len(text) <= INLINE_LIMIT else None


def _tag(value: Any) -> Any:
    # JSON has no tuples: keep them apart from lists.
    if type(value) is tuple:
        return {"__tuple__": [_tag(item) for item in value]}
    if type(value) is list:
        return [_tag(item) for item in value]
    if type(value) is dict:
        return {key: _tag(item) for key, item in value.items()}
    return value


def untag(value: Any) -> Any:
    """The value :func:`_tag` made JSON of; ``ValueError`` for a malformed tuple."""
    if isinstance(value, dict):
        if set(value) == {"__tuple__"}:
            if not isinstance(value["__tuple__"], list):
                raise ValueError(f"'__tuple__' holds {type(value['__tuple__']).__name__}, not a list")
            return tuple(untag(item) for item in value["__tuple__"])
        return {key: untag(item) for key, item in value.items()}
    if isinstance(value, list):
        return [untag(item) for item in value]
    return value


def _type_name(value: Any) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


def describe_function(function: Any, origin: dict[str, Any]) -> dict[str, Any]:
    """Name, argument names and JSON-safe defaults (keyword-only ones included)."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return {"format": FORMAT, "module": function.__module__, "qualname": function.__qualname__, "args": [],
                "defaults": {}, "provenance": origin}
    names, defaults, kinds = [], {}, {}
    for parameter in signature.parameters.values():
        names.append(parameter.name)
        kinds[parameter.name] = parameter.kind.name
        if parameter.default is not inspect.Parameter.empty:
            default = redact(parameter.default)
            inline = _inline(default)
            defaults[parameter.name] = inline or {"kind": "unsaved", "type": _type_name(default),
                                                   "reason": redact_repr(f"default {default!r} is not JSON")}
    return {"format": FORMAT, "module": function.__module__, "qualname": function.__qualname__,
            "args": names, "kinds": kinds, "defaults": defaults, "provenance": origin}
