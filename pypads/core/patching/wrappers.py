"""Wrappers that route calls through a :class:`~pypads.core.calls.CallSite`.

Generators and coroutine functions are left alone: a plain wrapper would change what
kind of function they are (and time only the creation of the generator).

A wrapper must be indistinguishable from what it wraps for everything but tracking:
same ``__name__``, ``__qualname__``, ``__doc__``, ``__module__`` and ``inspect.signature``
(through ``__wrapped__``), same binding behaviour as a method, classmethod, staticmethod
or descriptor, and the same ``AttributeError`` where the original descriptor raises one
(scikit-learn's ``available_if``: ``hasattr(pipeline, "predict_proba")`` must not change).
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any

from pypads.core.calls import CallSite
from pypads.core.patching.dispatch import register
from pypads.core.patching.functions import can_track


def wrap_function(original: Callable[..., Any], site: CallSite) -> Callable[..., Any]:
    """A plain function that calls ``original`` through ``site``.

    Being a real function, it binds as a method exactly like the original does. It holds
    only ``original`` and a key (see :mod:`pypads.core.patching.dispatch`), so a class that
    holds it still pickles by value, and loads where pypads is not running.
    """
    if site.key is None:
        site.key = register(site)
    key = site.key

    @functools.wraps(original)
    def tracked(*args: Any, **kwargs: Any) -> Any:
        try:
            dispatch = __pypads_dispatch__  # type: ignore[name-defined]  # noqa: F821 - a builtin while pypads runs
        except NameError:  # unpickled where pypads is not running: only the original is left
            return original(*args, **kwargs)
        return dispatch(key, original, args, kwargs)

    return tracked


class TrackedDescriptor:
    """Stands in for a non-function descriptor (e.g. ``available_if``) in a class body.

    Binding is delegated to the original descriptor, so whatever it raises or returns
    for an instance stays the same; only the callable it yields is tracked.
    """

    def __init__(self, original: Any, site: CallSite) -> None:
        self.original = original
        self.site = site
        self._wrappers: dict[Callable[..., Any], Callable[..., Any]] = {}
        functools.update_wrapper(self, original, updated=())  # type: ignore[arg-type]

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        bound = self.original.__get__(instance, owner)
        if isinstance(bound, types.MethodType) and can_track(bound.__func__):
            # The bound method is new on each access, its function is not: one wrapper each.
            function = bound.__func__
            wrapper = self._wrappers.get(function)
            if wrapper is None:
                wrapper = self._wrappers[function] = wrap_function(function, self.site)
            return types.MethodType(wrapper, bound.__self__)
        if instance is None and can_track(bound):
            return wrap_function(bound, self.site)
        return bound

    def __reduce_ex__(self, protocol: Any) -> Any:
        # Pickled (a user's class copied by value), it is the original descriptor again:
        # the copy must load where pypads is not installed.
        return self.original.__reduce_ex__(protocol)

    def __getattr__(self, name: str) -> Any:
        # Reached only for attributes this proxy lacks; "original" itself is missing only
        # while the object is half-built (copy, pickle), where forwarding would recurse.
        if name == "original":
            raise AttributeError(name)
        return getattr(self.original, name)


def wrap_class_attribute(value: Any, make_site: Callable[[str], CallSite]) -> Any | None:
    """The tracked replacement for an attribute found in a class ``__dict__``, or None
    when it is not something that can be called (properties, data, nested classes)."""
    if isinstance(value, (staticmethod, classmethod)):
        if not can_track(value.__func__):
            return None
        if isinstance(value, staticmethod):
            return staticmethod(wrap_function(value.__func__, make_site("none")))
        return classmethod(wrap_function(value.__func__, make_site("class")))
    if isinstance(value, types.FunctionType):
        return wrap_function(value, make_site("instance")) if can_track(value) else None
    if isinstance(value, type) or isinstance(value, property):
        return None
    descriptor_type = type(value)
    if hasattr(descriptor_type, "__get__") and not hasattr(descriptor_type, "__set__"):
        return TrackedDescriptor(value, make_site("instance"))
    return None
