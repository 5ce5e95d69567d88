"""Input and Output: the arguments and results of tracked calls.

Two layouts (option ``layout``):

- ``"function"``: one artifact per tracked function, ``calls/<name>.jsonl``, a line per
  call for its inputs and one for its output. Data the run knows as a dataset (see
  :class:`~pypads.recording.content.catalogue.Catalogue`) is named, not copied; small values are
  kept as they are (scalars) or as their text; larger ones as a summary with their
  digest. So a script's artifact count grows with the functions it called, not with
  its calls: 1,000 ``predict`` calls make one file.
- ``"call"``: a folder per call, ``calls/<order>_<name>/``, a file per argument
  (``input/<argument>.<ext>``) and for the result (``output.<ext>`` or
  ``exception.txt``). ``write_format="pickle"`` always writes this layout: pickles are
  files to load again, not lines of text.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from pypads.core import REDACTED, Logger, is_secret_name, redact_repr
from pypads.recording.content.catalogue import Known, catalogue, data_arguments
from pypads.recording.content.serialize import WriteFormats, serialize, write_format
from pypads.recording.provenance import provenance
from pypads.run import TrackedCall

LAYOUTS = ("function", "call")
# The layout of loggers not told otherwise. "call" keeps the seed's folder per call.
DEFAULT_LAYOUT = "function"
# What a summary inside a line needs: the rest of a value summary is the file's business.
_SUMMARY_KEYS = ("type", "shape", "dtype", "approximate_bytes", "blake3")


@functools.lru_cache(maxsize=4096)
def _signature(function: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(function)
    except (TypeError, ValueError):  # some builtins have no signature
        return None


def named_arguments(call: TrackedCall) -> dict[str, Any]:
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


def inline(value: Any, max_inline: int) -> Any:
    """``value`` as it goes into a line of a call log: JSON scalars as they are, other
    values as their text, and a value larger than ``max_inline`` bytes (or text) as
    ``{"summary": {type, shape, dtype, approximate_bytes, blake3}}``."""
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, str) and len(value) <= max_inline:
        return value
    extension, content = serialize(value, WriteFormats.text, max_inline, dict)
    if extension == "txt":
        return content.decode("utf-8")
    described = json.loads(content)
    return {"summary": {key: described[key] for key in _SUMMARY_KEYS if key in described}}


class _ValueLogger(Logger):
    defaults = {"write_format": "text", "max_bytes": 1_000_000, "layout": DEFAULT_LAYOUT, "max_inline": 1024}

    @staticmethod
    def per_call(options: Mapping[str, Any]) -> bool:
        return options["layout"] == "call" or write_format(options["write_format"]) is WriteFormats.pickle

    def _write(self, call: TrackedCall, path: str, value: Any, options: Mapping[str, Any]) -> None:
        subject = call.instance if call.instance is not None else call.function
        extension, content = serialize(value, write_format(options["write_format"]), options["max_bytes"],
                                       lambda: provenance(self.name, call.run.mappings, subject))
        call.run.writer.log_bytes(f"{call.folder}/{path}.{extension}", content)

    def _append(self, call: TrackedCall, record: dict[str, Any]) -> None:
        """One line of ``calls/<name>.jsonl``; its first line says where it comes from."""
        path = f"calls/{call.name}.jsonl"
        started: set[str] = call.run.state(_ValueLogger).setdefault("files", set())
        if path not in started:
            started.add(path)
            subject = call.instance if call.instance is not None else call.function
            header = {"function": call.name, "provenance": provenance(self.name, call.run.mappings, subject)}
            call.run.writer.append_bytes(path, (json.dumps(header) + "\n").encode())
        line = {"call": call.number, "order": call.order, **record}
        call.run.writer.append_bytes(path, (json.dumps(line, default=str) + "\n").encode())


class Input(_ValueLogger):
    """Records the arguments of each call (see the module's docstring for the layouts).

    Options: ``layout`` (``"function"`` or ``"call"``), ``write_format`` (``"text"`` or
    ``"pickle"``, which implies ``"call"``), ``max_inline`` (bytes of a value kept in a
    line; a larger one is summarised) and ``max_bytes`` (the same for a file of the
    ``"call"`` layout). A summary holds type, shape, dtype, size and the BLAKE3 digest
    of the content (:func:`pypads.recording.content.digests.content_digest`); the size is
    estimated before any text or pickle is built, and the digest never copies the value.

    In the ``"function"`` layout, the data of a call of the script's own (``X`` and
    ``y`` of a fit, ``X`` of a predict, ``y_true`` of a metric) is written as
    ``{"dataset": <name>, "digest": <digest>}``, the name and digest under which the
    Datasets logger lists it among the run's inputs (``"part": "targets"`` for ``y``).
    """

    def pre(self, call: TrackedCall, options: Mapping[str, Any]) -> None:
        # An argument named like a secret (fetch(api_token=…)) is *** whatever its value.
        arguments = {name: REDACTED if is_secret_name(name) else value for name, value in named_arguments(call).items()}
        if self.per_call(options):
            for name, value in arguments.items():
                self._write(call, f"input/{name}", value, options)
            return
        features, targets = data_arguments(call)
        known = _dataset(call, features, targets)
        inputs = {}
        for name, value in arguments.items():
            if known is not None and value is features:
                inputs[name] = known.reference()
            elif known is not None and targets is not None and value is targets:
                inputs[name] = known.reference("targets")
            else:
                inputs[name] = inline(value, options["max_inline"])
        self._append(call, {"inputs": inputs})


def _dataset(call: TrackedCall, features: Any, targets: Any) -> Known | None:
    """The dataset a call works on: identified (digested, if new) for a call of the
    script's own, only looked up by identity for one inside a library's call."""
    if features is None:
        return None
    if call.depth == 0:
        return catalogue(call).identify(call, features, targets)
    return catalogue(call).known(features, targets)


class Output(_ValueLogger):
    """Records the result of each call, or the exception it raised: in the
    ``"function"`` layout as a line ``{"output": …}`` or ``{"exception": "<type>:
    <message>"}`` of ``calls/<name>.jsonl``, in the ``"call"`` layout as
    ``calls/<order>_<name>/output.<ext>`` or ``exception.txt``. Options as for :class:`Input`."""

    def post(self, call: TrackedCall, before: None, options: Mapping[str, Any]) -> None:
        if call.exception is not None:
            text = redact_repr(f"{type(call.exception).__qualname__}: {call.exception}")
            if self.per_call(options):
                call.run.writer.log_bytes(f"{call.folder}/exception.txt", text.encode("utf-8"))
            else:
                self._append(call, {"exception": text[: options["max_inline"]]})
            return
        if self.per_call(options):
            self._write(call, "output", call.result, options)
        else:
            self._append(call, {"output": inline(call.result, options["max_inline"])})
