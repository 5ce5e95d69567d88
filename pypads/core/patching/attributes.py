"""Every attribute pypads set on a class or on a descriptor, in order, so that all of
them, or only those set since a mark (a target whose patching failed), can be put back
exactly as they were."""

from __future__ import annotations

from typing import Any

MISSING = object()  # what a class had under a name it did not define


class AttributePatches:
    """The log of attributes set, and what each replaced."""

    def __init__(self) -> None:
        # (class, attribute, what it was or MISSING, what pypads put there)
        self._on_classes: list[tuple[type, str, Any, Any]] = []
        # (descriptor, attribute, original function, wrapper) for descriptors patched in place
        self._on_objects: list[tuple[Any, str, Any, Any]] = []
        self._unpatched: dict[int, Any] = {}  # wrapper pypads put (in a class, on a descriptor) -> what it wraps

    def set_on_class(self, cls: type, name: str, replacement: Any, wrapped: Any = MISSING) -> bool:
        """Put ``replacement`` at ``cls.name``; False for an immutable (built-in or
        extension) type, which stays as it is. ``wrapped``: what the replacement wraps."""
        previous = vars(cls).get(name, MISSING)
        try:
            type.__setattr__(cls, name, replacement)
        except TypeError:
            return False
        if wrapped is not MISSING:
            self._unpatched[id(replacement)] = wrapped
        self._on_classes.append((cls, name, previous, replacement))
        return True

    def set_on_object(self, descriptor: Any, name: str, original: Any, replacement: Any) -> None:
        """Note that ``descriptor.name`` was ``original`` and is now ``replacement``."""
        self._on_objects.append((descriptor, name, original, replacement))
        self._unpatched[id(replacement)] = original

    def unwrapped(self, value: Any) -> Any:
        """What ``value`` wraps, if it is a wrapper pypads put in a class or on a
        descriptor, else ``value``: a class tree patched again wraps the original once."""
        return self._unpatched.get(id(value), value)

    def mark(self) -> tuple[int, int]:
        return len(self._on_classes), len(self._on_objects)

    def undo(self, mark: tuple[int, int] = (0, 0)) -> None:
        """Put back everything set since ``mark`` (by default, everything), newest first."""
        on_classes, on_objects = mark
        for descriptor, name, original, replacement in reversed(self._on_objects[on_objects:]):
            if getattr(descriptor, name, None) is replacement:
                setattr(descriptor, name, original)
        del self._on_objects[on_objects:]
        for cls, name, original, replacement in reversed(self._on_classes[on_classes:]):
            self._unpatched.pop(id(replacement), None)
            if vars(cls).get(name, MISSING) is not replacement:
                # Someone wrapped our wrapper since (sklearn's set_output does, for classes
                # created while tracking): keep theirs, ours passes calls straight through.
                continue
            if original is MISSING:
                type.__delattr__(cls, name)
            else:
                type.__setattr__(cls, name, original)
        del self._on_classes[on_classes:]
