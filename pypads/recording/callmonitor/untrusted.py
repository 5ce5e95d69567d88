"""Reading the files of a call database as possibly hostile input.

A database may come from anyone (a colleague's folder, a downloaded run), so every
file is opened only after its real path is found inside the database's folder (no
``..``, no absolute path, no symbolic link leading out), only if it is a regular file
(a FIFO would block the reader forever) and only up to a size bound. JSON documents
are checked against ``callmonitor.schema.json``. Every failure is one
:class:`CallMonitorError` that names the file (and the record, by the caller's ``where``).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from pypads.core import CALLMONITOR, CallMonitorError, most_relevant_error, validator

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

MAX_DOCUMENT = 64 << 20  # bytes of one JSON document or line; records keep large values in files
_SAFE_NAME_EXCLUDED = ("/", "\\", "\0")


def plain_name(value: Any, where: str, what: str) -> str:
    """``value`` if it is a bare file name (no folder part, not ``.`` or ``..``)."""
    if (not isinstance(value, str) or value in ("", ".", "..") or value.startswith(".")
            or any(character in value for character in _SAFE_NAME_EXCLUDED)):
        raise CallMonitorError(f"{where}: {what} {value!r} is not a plain file name inside the database")
    return value


def inside(root: Path, path: Path, where: str) -> Path:
    """The real path of ``path``, which must lie inside ``root`` (itself a real path)."""
    real = path.resolve()
    if real != root and not real.is_relative_to(root):
        raise CallMonitorError(f"{where}: {path.name!r} leads outside the database, to {real}")
    return real


def check_tree(root: Path, folder: Path, where: str) -> None:
    """Raise unless everything in ``folder`` lies inside ``root`` and is a folder or a
    regular file: for a handler's ``load``, which opens files by itself."""
    for path in folder.rglob("*"):
        real = inside(root, path, where)
        if not (real.is_dir() or real.is_file()):
            raise CallMonitorError(f"{where}: {path.relative_to(folder)} is not a regular file")


def open_regular(root: Path, path: Path, where: str, limit: int | None = None) -> BinaryIO:
    """``path`` opened for reading, if it is a regular file inside ``root`` (and at
    most ``limit`` bytes)."""
    real = inside(root, path, where)
    try:
        # O_NONBLOCK: opening a FIFO planted in the folder must not wait for a writer.
        descriptor = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise CallMonitorError(f"{where}: cannot open {path.name} ({error.strerror})") from None
    status = os.fstat(descriptor)
    if not stat.S_ISREG(status.st_mode) or (limit is not None and status.st_size > limit):
        os.close(descriptor)
        problem = "is not a regular file" if not stat.S_ISREG(status.st_mode) else f"is larger than {limit} bytes"
        raise CallMonitorError(f"{where}: {path.name} {problem}")
    return os.fdopen(descriptor, "rb")


def parse(text: bytes | str, where: str) -> Any:
    """JSON ``text``; nesting too deep for Python's parser is malformed too."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise CallMonitorError(f"{where}: not valid JSON ({str(error)[:200]})") from None


def read_json(root: Path, path: Path, where: str) -> Any:
    with open_regular(root, path, where, MAX_DOCUMENT) as stream:
        return parse(stream.read(), where)


def json_lines(root: Path, path: Path, where: str) -> Iterator[tuple[int, Any | None]]:
    """``(line number, document)`` for each non-empty line of a JSON Lines file; the
    document is None for a last line that does not parse (torn by a kill while it was
    written: that call never finished)."""
    with open_regular(root, path, where) as stream:
        number = 0
        while True:
            line = stream.readline(MAX_DOCUMENT + 1)
            if not line:
                return
            number += 1
            if len(line) > MAX_DOCUMENT:
                raise CallMonitorError(f"{where} line {number}: longer than {MAX_DOCUMENT} bytes")
            if not line.strip():
                continue
            try:
                yield number, parse(line, f"{where} line {number}")
            except CallMonitorError:
                if not line.endswith(b"\n") and not stream.read(1):
                    yield number, None
                    return
                raise


@cache
def _validator(definition: str) -> Validator:
    # Kept: a record is checked each time a call is read.
    return validator(CALLMONITOR, definition)


def check(document: Any, definition: str, where: str) -> None:
    """Raise unless ``document`` follows ``#/$defs/<definition>`` of the call-database schema."""
    error = most_relevant_error(_validator(definition), document)
    if error is not None:
        raise CallMonitorError(f"{where}: at {error.json_path}: {error.message[:300]}")
