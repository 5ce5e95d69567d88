"""Reading the names a script gives its values, without keeping the values alive.

On Python 3.12 and older, ``frame.f_locals`` of a function's frame is a snapshot dict
that the frame keeps until it ends: a variable the script deletes (``del X``) stays
alive in it, and a ``main()`` that runs the whole script would hold every array it ever
named. So the snapshot is emptied once read. Not while a tracer runs (a debugger
evaluating an expression in that frame passes that very dict as its locals and writes
it back afterwards). Python 3.13's ``f_locals`` is a view, with nothing to empty.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterator
from types import FrameType
from typing import Any

_VIEW = sys.version_info >= (3, 13)


def variables(frame: FrameType) -> Iterator[tuple[str, Any]]:
    """The frame's local variables (for a module's frame: its globals), as pairs."""
    local = frame.f_locals
    snapshot = not _VIEW and bool(frame.f_code.co_flags & inspect.CO_NEWLOCALS) and local is not frame.f_globals
    try:
        yield from list(local.items())
    finally:
        if snapshot and sys.gettrace() is None:
            local.clear()


def name_of(frame: FrameType, value: Any) -> str | None:
    """A variable of ``frame`` (local, else global) that holds ``value`` itself; public
    names first."""
    found = None
    for scope in (variables(frame), frame.f_globals.items()):
        for name, candidate in scope:
            if candidate is value and name.isidentifier():
                if not name.startswith("_"):
                    return name
                found = found or name
    return found
