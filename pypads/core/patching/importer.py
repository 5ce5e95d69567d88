"""The import hook: modules named by mapping files are patched as soon as they execute;
and what becomes of those imported before ``PyPads()``."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

from pypads.core.errors import MappingWarning, warn


class PatchingLoader(importlib.abc.Loader):
    """Runs the real loader, then hands the fresh module to ``on_loaded``.

    Once the module has executed, the real loader is put back on the module and its
    spec, so nothing downstream (``inspect``, ``importlib.resources``, ``reload``)
    ever sees this class.
    """

    def __init__(self, loader: Any, on_loaded: Callable[[ModuleType], None]) -> None:
        self.loader = loader
        self.on_loaded = on_loaded

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        created: ModuleType | None = self.loader.create_module(spec)
        return created

    def exec_module(self, module: ModuleType) -> None:
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        module.__loader__ = self.loader
        self.loader.exec_module(module)
        try:
            self.on_loaded(module)
        except Exception as error:  # the user's import must succeed whatever pypads does
            warn(f"pypads: {module.__name__} was imported but could not be patched ({error!r}); it is not tracked",
                 MappingWarning)

    def __getattr__(self, name: str) -> Any:
        if name == "loader":
            raise AttributeError(name)
        return getattr(self.loader, name)


class PatchingFinder(importlib.abc.MetaPathFinder):
    """A ``sys.meta_path`` entry that wraps the loader of watched modules only.

    Other modules are declined at once (``None``), so the cost for every other import
    is one set lookup.
    """

    def __init__(self, is_watched: Callable[[str], bool], on_loaded: Callable[[ModuleType], None]) -> None:
        self.is_watched = is_watched
        self.on_loaded = on_loaded

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not self.is_watched(fullname):
            return None
        for finder in sys.meta_path:
            find_spec = getattr(finder, "find_spec", None)
            if finder is self or find_spec is None:
                continue
            spec: importlib.machinery.ModuleSpec | None = find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = PatchingLoader(spec.loader, self.on_loaded)
        return spec

    def install(self) -> None:
        if self not in sys.meta_path:
            sys.meta_path.insert(0, self)

    def uninstall(self) -> None:
        while self in sys.meta_path:
            sys.meta_path.remove(self)


def prepare_imports(libraries: Iterable[str], clear: bool, reload: bool, affected: Iterable[str] | None) -> list[str]:
    """Clear or reload the ``affected`` modules as asked; otherwise the mapped libraries'
    modules imported before ``PyPads()`` (they are patched in place), for it to say so."""
    libraries = set(libraries)
    if (clear or reload) and affected is None:
        # Classes are patched in place, so nothing needs re-importing; re-importing a
        # whole library behind the user's back would orphan the objects they hold
        # (isinstance checks against BaseEstimator would fail). Only named modules are.
        warn("clear_imports/reload_modules act on affected_modules only; none given, "
             "so nothing was cleared or reloaded (modules imported earlier are patched in place)",
             stacklevel=4)
        return []
    names = list(affected or ())
    if clear:
        for name in names:
            sys.modules.pop(name, None)
    elif reload:
        for name in names:
            module = sys.modules.get(name)
            if module is not None:
                try:
                    importlib.reload(module)
                except Exception as error:
                    warn(f"pypads could not reload {name}: {error}", stacklevel=4)
    else:
        return sorted(name for name in sys.modules if name.split(".")[0] in libraries)
    return []
