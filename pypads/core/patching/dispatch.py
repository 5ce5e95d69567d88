"""How tracked code finds pypads when it is called: by a number, through one builtin.

Neither a wrapper in a class nor a function's trampoline holds pypads' state (the run,
its locks, the loggers): each holds a key, and looks the call site up here at call time
through ``__pypads_dispatch__``, a builtin. Builtins are the one namespace every module
shares, and a name looked up there is not captured when a function is pickled by value.

That matters for a user's estimator defined in a script's ``__main__``: cloudpickle
copies such a class with its methods, so ``GridSearchCV(MyTree(), n_jobs=2)`` can send
it to worker processes. A wrapper that held the run would drag its locks along (and
fail); a wrapper that holds a key pickles as plain code and, where pypads is not
running, finds no dispatcher and simply calls the original.
"""

from __future__ import annotations

import builtins
import itertools
import secrets
from collections.abc import Callable
from typing import Any, Protocol

from pypads.core.calls import Session

DISPATCH_NAME = "__pypads_dispatch__"


class Site(Protocol):
    """What a key leads to: a :class:`~pypads.core.calls.CallSite`, or a stand-in that picks
    one per call (a mixin's method, an inherited ``__init_subclass__``)."""

    session: Session

    def invoke(self, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any: ...


_sites: dict[int, tuple[Site, Callable[..., Any] | None]] = {}
# Keys differ between processes, so that a wrapper unpickled in another process that
# runs pypads never reaches an unrelated call site there.
_keys = itertools.count(secrets.randbits(40) << 20)


def register(site: Site, original: Callable[..., Any] | None = None) -> int:
    """A new key for ``site``; ``original`` is what a caller that passes none runs (a
    function's trampoline cannot hold the copy of its own code)."""
    key = next(_keys)
    _sites[key] = (site, original)
    setattr(builtins, DISPATCH_NAME, dispatch)
    return key


def unregister(keys: list[int]) -> None:
    """Forget ``keys``: their wrappers, wherever they still are, call the original."""
    for key in keys:
        _sites.pop(key, None)
    if not _sites and hasattr(builtins, DISPATCH_NAME):
        delattr(builtins, DISPATCH_NAME)


def dispatch(key: int, original: Callable[..., Any] | None, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run a call of a tracked attribute: through its site while a run is tracked, else
    straight to the original."""
    entry = _sites.get(key)
    if entry is None:
        assert original is not None, "a trampoline outlived its restore"
        return original(*args, **kwargs)
    site, registered = entry
    function = original if original is not None else registered
    assert function is not None
    if site.session.run is None:
        return function(*args, **kwargs)
    return site.invoke(function, args, kwargs)
