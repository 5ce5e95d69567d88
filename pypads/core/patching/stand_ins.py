"""Call sites for functions shared by mapped and unmapped classes: a mixin's method and an
inherited ``__init_subclass__``, tracked in place once and deciding per call.

A method a mapped class inherits from an unmapped mixin (``TransformerMixin.fit_transform``)
is never copied into the subclass's ``__dict__``: scikit-learn's ``_SetOutputMixin`` wraps
``fit_transform``/``transform`` of every class that defines them itself, so a copy made
while a class is created would be wrapped a second time. The mixin's own function is
tracked in place instead, once, and the class of each call's receiver decides whether
that call is tracked (a :class:`ReceiverSite`). Subclasses are hooked the same way where
the mapped class inherits a Python ``__init_subclass__`` (:class:`SubclassHook`); a class
that has only ``object``'s gets one of its own (:func:`new_init_subclass`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from pypads.core.calls import CallSite, Session
from pypads.core.patching.attributes import MISSING


class Patches(Protocol):
    """What a stand-in asks of the patcher."""

    session: Session

    def site_for(self, cls: type, name: str, value: Any, bound_to: str) -> CallSite | None: ...

    def patch_new_subclass(self, cls: type) -> None: ...


class ReceiverSite:
    """Tracks a function shared by mapped and unmapped classes (a mixin's method):
    calls whose receiver's class is mapped go through that class's call site, all
    others straight to the original. Duck-types the part of :class:`CallSite` that
    the in-place function patches use (``session``, ``invoke``)."""

    __slots__ = ("session", "_patcher", "_attribute", "_value", "_bound_to", "_sites")

    def __init__(self, patcher: Patches, attribute: str, value: Any, bound_to: str) -> None:
        self.session = patcher.session
        self._patcher = patcher
        self._attribute = attribute
        self._value = value
        self._bound_to = bound_to
        self._sites: dict[type, Any] = {}  # the receiver's class -> its CallSite, or None: untracked

    def invoke(self, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not args:
            return original(*args, **kwargs)
        receiver = args[0] if self._bound_to == "class" else type(args[0])
        site = self._sites.get(receiver, MISSING) if isinstance(receiver, type) else None
        if site is MISSING:
            site = self._sites[receiver] = self._patcher.site_for(receiver, self._attribute, self._value, self._bound_to)
        if site is None:
            return original(*args, **kwargs)
        return site.invoke(original, args, kwargs)


class SubclassHook:
    """Stands in for a call site on an inherited ``__init_subclass__`` patched in place:
    runs it, then patches the new class if it belongs to a mapped class's tree."""

    __slots__ = ("session", "_patcher")

    def __init__(self, patcher: Patches) -> None:
        self.session = patcher.session
        self._patcher = patcher

    def invoke(self, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        result = original(*args, **kwargs)
        if args and isinstance(args[0], type):
            self._patcher.patch_new_subclass(args[0])
        return result


def new_init_subclass(base: type, own: Any, patcher: Patches) -> classmethod[Any, ..., None]:
    """An ``__init_subclass__`` for ``base`` that runs the one ``base`` defined (``own``;
    MISSING: none, then its parents'), then patches the new class."""

    def __init_subclass__(cls: type, **kwargs: Any) -> None:
        if own is MISSING:
            super(base, cls).__init_subclass__(**kwargs)  # type: ignore[arg-type]
        else:
            own.__get__(None, cls)(**kwargs)
        patcher.patch_new_subclass(cls)

    return classmethod(__init_subclass__)
