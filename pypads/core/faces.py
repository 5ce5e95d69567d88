"""A floor's face: the one module the floors above import it through, loading each name
only when it is first used (PEP 562's module ``__getattr__``).

A face that imported its floor's modules up front would load the whole floor with any
one of them: the call core must be importable without its mapping files, and the way to
MLflow without MLflow's client. So a face lists where each name lives, and for type
checkers imports the names under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(face: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of the face module ``face``: ``homes`` maps each module of the
    floor to the names the face offers from it, separated by spaces. A name, once found,
    becomes a plain attribute of the face, so later uses cost nothing."""
    home_of = {name: module for module, names in homes.items() for name in names.split()}

    def find(name: str) -> Any:
        home = home_of.get(name)
        if home is None:
            raise AttributeError(f"module {face!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[face], name, value)
        return value

    return find
