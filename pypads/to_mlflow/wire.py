"""The messages between a script and its uploader process, and how they travel.

The script writes commands to the uploader's stdin and the uploader answers on its
stdout, one JSON line per message: ``{"kind": "flush", "number": 3}``. Both ends encode
and decode here, so they cannot disagree about a field's name or type. The end of the
uploader's input is not a message: it means the script is gone.

A line that is not a message of the expected direction raises :class:`WireError`;
each end reports it and reads on (see ``pypads.to_mlflow.link.process`` and
``pypads.to_mlflow.uploader.serving``).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, ClassVar


class WireError(ValueError):
    """A line that is not a well-formed message."""


# --- commands: script -> uploader ----------------------------------------------------
@dataclass(frozen=True)
class Flush:
    """Upload what the journal holds now, then answer :class:`Flushed` with ``number``."""

    kind: ClassVar[str] = "flush"
    number: int


@dataclass(frozen=True)
class Close:
    """Upload the rest, end the run with ``status`` (None: leave it as it is), and stop;
    give up once MLflow has not answered one call for ``timeout`` seconds."""

    kind: ClassVar[str] = "close"
    status: str | None
    timeout: float


# --- answers: uploader -> script -----------------------------------------------------
@dataclass(frozen=True)
class Opened:
    """The run is open (``run_id``), or could not be (None)."""

    kind: ClassVar[str] = "open"
    run_id: str | None


@dataclass(frozen=True)
class Flushed:
    """The answer to :class:`Flush` ``number``: ``ok`` if all of it is in MLflow."""

    kind: ClassVar[str] = "flushed"
    number: int
    ok: bool


@dataclass(frozen=True)
class Closed:
    """The answer to :class:`Close`: ``ok`` if everything is in MLflow and the journal is gone."""

    kind: ClassVar[str] = "closed"
    ok: bool


@dataclass(frozen=True)
class Warned:
    """Something did not reach MLflow; the script shows ``message`` (once per ``key``)."""

    kind: ClassVar[str] = "warn"
    key: str
    message: str


@dataclass(frozen=True)
class ClockReading:
    """An MLflow call began (``busy``) or was answered: the script times its waits by these."""

    kind: ClassVar[str] = "clock"
    busy: bool


Command = Flush | Close
Answer = Opened | Flushed | Closed | Warned | ClockReading
Message = Command | Answer

COMMANDS: dict[str, type[Any]] = {kind.kind: kind for kind in (Flush, Close)}
ANSWERS: dict[str, type[Any]] = {kind.kind: kind for kind in (Opened, Flushed, Closed, Warned, ClockReading)}

# The JSON types each field annotation accepts (bool is an int to Python, not here).
_ACCEPTED: dict[str, tuple[type, ...]] = {
    "int": (int,), "float": (int, float), "bool": (bool,), "str": (str,), "str | None": (str, type(None)),
}


def encode(message: Message) -> bytes:
    """``message`` as one line of the wire."""
    return (json.dumps({"kind": message.kind, **dataclasses.asdict(message)}) + "\n").encode()


def decode_command(line: str | bytes) -> Command:
    """The command on ``line`` (read by the uploader); :class:`WireError` if there is none."""
    message: Command = _decode(line, COMMANDS, "command")
    return message


def decode_answer(line: str | bytes) -> Answer:
    """The answer on ``line`` (read by the script); :class:`WireError` if there is none."""
    message: Answer = _decode(line, ANSWERS, "answer")
    return message


def _decode(line: str | bytes, kinds: dict[str, type[Any]], direction: str) -> Any:
    shown = repr(line[:200])
    try:
        fields = json.loads(line)
    except ValueError as error:
        raise WireError(f"not a JSON {direction}: {shown}") from error
    if not isinstance(fields, dict):
        raise WireError(f"not a JSON object: {shown}")
    kind = kinds.get(fields.pop("kind", None))
    if kind is None:
        raise WireError(f"not a known {direction} ({', '.join(sorted(kinds))}): {shown}")
    expected = {field.name: field.type for field in dataclasses.fields(kind)}
    if set(fields) != set(expected):
        raise WireError(f"a {kind.kind} {direction} has the fields {', '.join(sorted(expected))}: {shown}")
    for name, annotation in expected.items():
        accepted = _ACCEPTED[str(annotation)]
        value = fields[name]
        if not isinstance(value, accepted) or (isinstance(value, bool) and bool not in accepted):
            raise WireError(f"field {name!r} of a {kind.kind} {direction} is not of type {annotation}: {shown}")
    return kind(**fields)
