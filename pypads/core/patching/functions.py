"""Tracking module-level functions in place, so that they keep their identity.

A function cannot be wrapped without replacing it, and replacing it breaks whoever
holds the original: a script that did ``from sklearn.metrics import f1_score`` before
``PyPads()``, the scorers scikit-learn builds at import time, and plain ``pickle``,
which checks that ``module.qualname`` is the very object being pickled (MLflow's
autolog fails there). So the function object stays where it is and only its code is
swapped: the new code is a trampoline that hands the call to pypads, which runs a copy
of the original function. ``restore()`` swaps the original code back.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

from pypads.core.patching.dispatch import DISPATCH_NAME, Site, register, unregister


def can_track(function: Any) -> bool:
    """Plain Python functions only: generators and coroutines would change kind."""
    return (
        isinstance(function, types.FunctionType)
        and not inspect.isgeneratorfunction(function)
        and not inspect.iscoroutinefunction(function)
        and not inspect.isasyncgenfunction(function)
    )


def _trampoline_code(function: types.FunctionType, key: int) -> types.CodeType:
    # CPython only accepts new code with as many free variables as the function has
    # closure cells; the unused names below make the count match.
    cells = [f"_cell{index}" for index in range(len(function.__code__.co_freevars))]
    source = (
        "def _outer():\n"
        + (f"    {' = '.join(cells)} = None\n" if cells else "")
        + "    def trampoline(*args, **kwargs):\n"
        + (f"        if False:\n            ({', '.join(cells)},)\n" if cells else "")
        + f"        return {DISPATCH_NAME}({key}, None, args, kwargs)\n"
        + "    return trampoline\n"
    )
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<pypads trampoline of {function.__qualname__}>", "exec"), namespace)
    code: types.CodeType = namespace["_outer"]().__code__
    names: dict[str, Any] = {"co_name": function.__code__.co_name}
    if hasattr(function.__code__, "co_qualname"):  # Python 3.11+
        names["co_qualname"] = function.__code__.co_qualname
    return code.replace(**names)


def _copy(function: types.FunctionType) -> types.FunctionType:
    copy = types.FunctionType(
        function.__code__, function.__globals__, function.__name__, function.__defaults__, function.__closure__
    )
    copy.__kwdefaults__ = function.__kwdefaults__
    copy.__dict__.update(function.__dict__)
    copy.__qualname__ = function.__qualname__
    copy.__module__ = function.__module__
    copy.__doc__ = function.__doc__
    copy.__annotations__ = function.__annotations__
    return copy


class FunctionPatches:
    """The functions patched by one tracker, and how to undo each."""

    def __init__(self) -> None:
        self._patched: dict[int, tuple[types.FunctionType, types.CodeType, int, bool]] = {}

    def track(self, function: types.FunctionType, make_site: Callable[[], Site]) -> None:
        if id(function) in self._patched or not can_track(function):
            return
        original_code = function.__code__
        copy = _copy(function)
        key = register(make_site(), copy)
        # inspect.signature and inspect.getsource follow __wrapped__ to the real code.
        added_wrapped = "__wrapped__" not in function.__dict__
        if added_wrapped:
            function.__wrapped__ = copy  # type: ignore[attr-defined]
        function.__code__ = _trampoline_code(function, key)
        self._patched[id(function)] = (function, original_code, key, added_wrapped)

    def mark(self) -> int:
        """A point to go back to with :meth:`restore` (how many functions are patched)."""
        return len(self._patched)

    def restore(self, since: int = 0) -> None:
        """Undo the patches made after ``since`` (a :meth:`mark`), by default all."""
        undone = list(self._patched)[since:]
        for identity in undone:
            function, original_code, _key, added_wrapped = self._patched[identity]
            function.__code__ = original_code
            if added_wrapped:
                del function.__wrapped__  # type: ignore[attr-defined]
        unregister([self._patched.pop(identity)[2] for identity in undone])
