"""Input and Output: the arguments and results of tracked calls, as artifacts per call."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from pypads.calls import Call
from pypads.loggers.base import Logger
from pypads.loggers.serialize import serialize, write_format
from pypads.provenance import provenance


@functools.lru_cache(maxsize=4096)
def _signature(function: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(function)
    except (TypeError, ValueError):  # some builtins have no signature
        return None


def named_arguments(call: Call) -> dict[str, Any]:
    """The call's arguments by parameter name, without ``self``/``cls``."""
    signature = _signature(call.function)
    receiver_given = call.instance is not None or isinstance(call.owner, type)
    if signature is not None:
        try:
            bound = signature.bind(*call.args, **call.kwargs)
        except TypeError:  # the call itself is wrong; the original will say so
            bound = None
        if bound is not None:
            names = list(bound.arguments.items())
            return dict(names[1:] if receiver_given and names else names)
    positional = call.args[1:] if receiver_given else call.args
    return {**{f"arg_{index}": value for index, value in enumerate(positional)}, **call.kwargs}


class _ValueLogger(Logger):
    defaults = {"write_format": "text", "max_bytes": 1_000_000}

    def _write(self, call: Call, path: str, value: Any, options: Mapping[str, Any]) -> None:
        subject = call.instance if call.instance is not None else call.function
        extension, content = serialize(value, write_format(options["write_format"]), options["max_bytes"],
                                       lambda: provenance(self.name, call.run.mappings, subject))
        call.run.writer.log_bytes(f"{call.folder}/{path}.{extension}", content)


class Input(_ValueLogger):
    """Writes each argument of the call to ``calls/<order>_<name>/input/<argument>.<ext>``.

    Options: ``write_format`` (``"text"`` or ``"pickle"``) and ``max_bytes``: a value
    larger than that is written as a JSON summary (type, shape, dtype, size and the BLAKE3
    digest of its content, see :func:`pypads.loggers.serialize.content_digest`). The size
    is estimated before any text or pickle is built, and the digest never copies the value.
    """

    def pre(self, call: Call, options: Mapping[str, Any]) -> None:
        for name, value in named_arguments(call).items():
            self._write(call, f"input/{name}", value, options)


class Output(_ValueLogger):
    """Writes the result of the call to ``calls/<order>_<name>/output.<ext>``, or the
    exception it raised to ``calls/<order>_<name>/exception.txt``."""

    def post(self, call: Call, before: None, options: Mapping[str, Any]) -> None:
        if call.exception is not None:
            text = f"{type(call.exception).__qualname__}: {call.exception}"
            call.run.writer.log_bytes(f"{call.folder}/exception.txt", text.encode("utf-8"))
            return
        self._write(call, "output", call.result, options)
