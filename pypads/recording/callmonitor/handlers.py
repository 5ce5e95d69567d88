"""Argument handlers: how values of a given type are saved to and loaded from files.

As in callmonitor, a handler is made per argument (``target`` is its label: the
position or the keyword), holds the value in ``data``, and writes its own files into
the call's folder. ``REGISTRY`` maps types to handler classes; numpy arrays are
handled out of the box and saved as ``arg_<label>.npy``.
"""

from __future__ import annotations

from os.path import join
from typing import Any

import numpy as np


class Handler:
    """Base class of argument handlers: subclass it and define ``save``, ``load`` and
    the classmethod ``accumulator_done`` (called when a database is closed)."""

    def __init__(self, target: str, data: Any = None) -> None:
        self.target = target
        self.data = data

    def save(self, path: str) -> None:
        raise NotImplementedError

    def load(self, path: str) -> None:
        raise NotImplementedError

    @classmethod
    def accumulator_done(cls) -> None:
        """Called once per handler class when a database is closed."""

    def files(self) -> list[str]:
        """The file names ``save`` writes (for handlers that know them in advance)."""
        return []


class NPHandler(Handler):
    """numpy arrays as ``arg_<label>.npy``, loaded without pickle."""

    def save(self, path: str) -> None:
        np.save(join(path, f"arg_{self.target}.npy"), self.data, allow_pickle=False)

    def load(self, path: str) -> None:
        self.data = np.load(join(path, f"arg_{self.target}.npy"), allow_pickle=False)

    def files(self) -> list[str]:
        return [f"arg_{self.target}.npy"]


class Registry:
    """Which handler class saves values of which type (checked with ``isinstance``,
    most recently added first)."""

    def __init__(self) -> None:
        self._handlers: dict[type, type[Handler]] = {}

    def add(self, kind: type, handler: type[Handler]) -> None:
        if not (isinstance(handler, type) and issubclass(handler, Handler)):
            raise TypeError(f"REGISTRY.add: {handler!r} is not a subclass of callmonitor.Handler")
        self._handlers[kind] = handler

    def handler_for(self, value: Any) -> type[Handler] | None:
        for kind in reversed(list(self._handlers)):
            if isinstance(value, kind):
                if isinstance(value, np.ndarray) and value.dtype == object:
                    return None  # object arrays need pickle: they are not numpy's to save
                return self._handlers[kind]
        return None

    def by_name(self, name: str) -> type[Handler] | None:
        return next((handler for handler in self._handlers.values() if _qualified(handler) == name), None)

    def handler_classes(self) -> list[type[Handler]]:
        return list(dict.fromkeys(self._handlers.values()))

    def __repr__(self) -> str:
        lines = [f"    {kind!r} : {handler!r}" for kind, handler in self._handlers.items()]
        return "{\n" + ",\n".join(lines) + "\n}"


def _qualified(kind: type) -> str:
    return f"{kind.__module__}.{kind.__qualname__}"


REGISTRY = Registry()
REGISTRY.add(np.ndarray, NPHandler)
