"""Which function a replay runs: one the caller passes, or one found by the name a
database records, but only inside modules the caller allows.

A database names its functions in ``function.json``; whoever wrote the file chose
that name. Importing and calling it would run whatever they named (``os.system``),
so a name is followed only into a module the caller lists in ``allow_modules``, and
only through classes of such modules to a callable of such a module: an allowed
module that imports ``os`` does not lead to ``os.system``.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Iterable
from typing import Any

from pypads.core import CallMonitorError


def unwrapped(function: Callable[..., Any]) -> Callable[..., Any]:
    """The original under recording or tracking wrappers: replaying must not record
    another call."""
    return inspect.unwrap(function)


def allowed(module: Any, allow_modules: Iterable[str]) -> bool:
    """Whether ``module`` is one of ``allow_modules`` or inside one of those packages."""
    return isinstance(module, str) and any(module == name or module.startswith(name + ".") for name in allow_modules)


def find_function(module: str, qualname: str, allow_modules: tuple[str, ...], name: str, n: int) -> Callable[..., Any]:
    """The function ``module.qualname`` (recorded for call ``n`` of ``name``), if the
    caller allows it."""
    shown = f"{module}.{qualname}"
    passing = f"pass the function itself: replay({name!r}, {n}, function=…)"
    if not allowed(module, allow_modules):
        package = module.split(".")[0]
        raise CallMonitorError(
            f"replay of {name} would import and run {shown}, a name read from the database: it runs only a "
            f"function you pass or one in a module you allow — {passing}, or replay(..., "
            f"allow_modules=[{package!r}]) if you trust that module's code")
    if "<locals>" in qualname.split("."):
        raise CallMonitorError(f"{shown} was defined inside a function and cannot be found by name: {passing}")
    if module == "__main__":
        target: Any = sys.modules["__main__"]
    else:
        try:
            target = importlib.import_module(module)
        except Exception as error:  # an allowed module that is absent or broken here
            raise CallMonitorError(f"replay of {name}: cannot import {module} ({error!r}): {passing}") from None
    for index, part in enumerate(qualname.split(".")):
        try:
            target = getattr(target, part)
        except AttributeError:
            where = "the recording script's __main__, not in this one" if module == "__main__" else module
            raise CallMonitorError(f"{shown} is not found: it was defined in {where}; {passing}") from None
        last = index == len(qualname.split(".")) - 1
        kind_ok = callable(target) if last else isinstance(target, type)
        if not allowed(getattr(target, "__module__", None), allow_modules) or not kind_ok:
            found = f"a {type(target).__name__} of module {getattr(target, '__module__', None)!r}"
            raise CallMonitorError(
                f"replay of {name}: {shown} does not lead through classes to a function of an allowed module "
                f"(at {part!r}: {found}); {passing}")
    return unwrapped(target)
