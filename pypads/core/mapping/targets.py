"""What a mapping entry's dotted path names in this process, read without importing.

Resolution reads only module and class namespaces that are already loaded (no
``getattr`` on modules, which could trigger a lazy import from inside an import hook),
so checking a mapping never imports a library behind the user's back. A target whose
module is not loaded yet cannot be judged: it is checked when that module is imported.
"""

from __future__ import annotations

import importlib.machinery
import sys
import types
from collections.abc import Iterable, Iterator
from typing import Any

from pypads.core.mapping.model import HookRule, MappingEntry


def resolve_loaded(target: str) -> Any:
    """The object a dotted path names, if the module holding it is already imported."""
    parts = target.split(".")
    for length in range(len(parts), 0, -1):
        module = sys.modules.get(".".join(parts[:length]))
        if module is None:
            continue
        found: Any = module
        for part in parts[length:]:
            namespace = vars(found) if isinstance(found, (types.ModuleType, type)) else {}
            found = namespace.get(part)
            if found is None or _stale_module(found):
                return None
        return found
    return None


def _stale_module(value: Any) -> bool:
    """A submodule still referenced by its package but dropped from ``sys.modules``
    (``clear_imports``): its next import makes a new one, which is the one to patch."""
    return isinstance(value, types.ModuleType) and sys.modules.get(value.__name__) is not value


def why_missing(target: str, executed: types.ModuleType | None = None) -> str | None:
    """Why ``target`` certainly does not exist, or None when it exists or cannot be
    told yet (its module is not imported, is still executing, or computes attributes
    on demand with a module ``__getattr__``). ``executed`` is a module the import hook
    knows to be complete although its import has not returned yet."""
    parts = target.split(".")
    length = next((n for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in sys.modules), 0)
    if length == 0:
        return None
    found: Any = sys.modules[".".join(parts[:length])]
    name = found.__name__
    for part in parts[length:]:
        if isinstance(found, types.ModuleType):
            if (found is not executed and _still_executing(found)) or "__getattr__" in vars(found) or _is_submodule(found, part):
                return None
        elif not isinstance(found, type):
            return f"{name} is a {type(found).__name__}, which has no attribute {part!r}"
        if part not in vars(found):
            kind = "module" if isinstance(found, types.ModuleType) else "class"
            return f"the {kind} {name} has no attribute {part!r}"
        found, name = vars(found)[part], f"{name}.{part}"
    return None


def _still_executing(module: types.ModuleType) -> bool:
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


def _is_submodule(package: types.ModuleType, part: str) -> bool:
    """Whether ``package.part`` is a module that can be imported (found, not imported)."""
    path = getattr(package, "__path__", None)
    if path is None:
        return False
    return importlib.machinery.PathFinder.find_spec(f"{package.__name__}.{part}", list(path)) is not None


def unmatched_patterns(entry: MappingEntry, found: Any) -> Iterator[tuple[HookRule, str]]:
    """The (rule, pattern) pairs of ``entry`` that select no attribute of ``found``: a
    module's public callables, or every attribute of a class, its bases and its loaded
    subclasses. A function entry fires its hooks for itself: there is nothing to match."""
    if isinstance(found, types.ModuleType):
        candidates = [(name, value) for name, value in vars(found).items()
                      if not name.startswith("_") and callable(value) and not isinstance(value, types.ModuleType)]
    elif isinstance(found, type):
        candidates = [(name, value) for cls in _class_tree(found) for klass in cls.__mro__
                      for name, value in vars(klass).items()]
    else:
        return
    modules = {getattr(value, "__module__", None) or "" for _, value in candidates}
    names = {name for name, _ in candidates}
    for rule in entry.rules:
        for pattern in rule.names:
            if not any(pattern.fullmatch(name) for name in names):
                yield rule, pattern.pattern
        for pattern in rule.packages:
            if not any(pattern.fullmatch(module) for module in modules):
                yield rule, pattern.pattern


def _class_tree(root: type) -> list[type]:
    seen: dict[type, None] = {}
    stack = [root]
    while stack:
        cls = stack.pop()
        if cls not in seen:
            seen[cls] = None
            stack.extend(type.__subclasses__(cls))
    return list(seen)


def loaded_subclasses(root: type) -> int:
    """How many subclasses of ``root`` exist so far."""
    return len(_class_tree(root)) - 1


def module_of(target: str) -> str:
    """The module a dotted target lives in: its longest imported prefix."""
    parts = target.split(".")
    return next((".".join(parts[:n]) for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in sys.modules), target)


def module_prefixes(targets: Iterable[str]) -> frozenset[str]:
    """Every module a dotted target may live in, or be reached through (``a``, ``a.b``,
    ``a.b.C`` for ``a.b.C``): the modules whose import matters to the targets."""
    names: set[str] = set()
    for target in targets:
        parts = target.split(".")
        names.update(".".join(parts[:length]) for length in range(1, len(parts) + 1))
    return frozenset(names)
