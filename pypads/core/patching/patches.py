"""Applying mapping entries to live objects, and undoing every change exactly.

Classes are patched in place (their ``__dict__``), so every reference to the class
sees the tracked methods, including subclasses created later: a mapped class gets an
``__init_subclass__`` that patches each new subclass, a user's class in ``__main__``
included. Functions are patched in place too (see ``functions.py``), so whoever holds
them — a script that did ``from sklearn.metrics import f1_score`` first, scikit-learn's
scorers, ``pickle`` — holds the tracked function: import order does not matter.
``restore()`` puts back the identical original objects.

An inherited mixin method is tracked in place instead of copied into the subclass (see
``stand_ins.py``).
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Iterable
from typing import Any

from pypads.core.calls import CallSite
from pypads.core.errors import MappingWarning, warn
from pypads.core.mapping.files import describe_unmatched, is_shipped
from pypads.core.mapping.model import CallReading, HookRule, MappingEntry, reading_among
from pypads.core.mapping.targets import module_of, module_prefixes, resolve_loaded, unmatched_patterns, why_missing
from pypads.core.patching.attributes import MISSING as _MISSING
from pypads.core.patching.attributes import AttributePatches
from pypads.core.patching.class_entries import ClassEntries
from pypads.core.patching.functions import FunctionPatches, can_track
from pypads.core.patching.stand_ins import ReceiverSite, SubclassHook, new_init_subclass
from pypads.core.patching.wrappers import wrap_class_attribute, wrap_function

# Never wrapped: wrapping them would change how classes are built or compared.
_NEVER = frozenset({"__init_subclass__", "__new__", "__class__", "__getattribute__", "__setattr__", "__delattr__"})

# (attribute, hooks, what its mapping says to read of its calls, what its first argument is)
SiteFactory = Callable[[str, frozenset[str], CallReading | None, str], CallSite]


class Patcher:
    """Holds the resolved mapping entries and every patch made from them."""

    def __init__(self, entries: Iterable[MappingEntry], make_site: SiteFactory) -> None:
        self._make_site = make_site
        # The session every call site shares (what the in-place patches ask for the run).
        self.session = make_site("", frozenset(), None, "none").session
        self._pending: dict[str, list[MappingEntry]] = {}
        for entry in entries:
            self._pending.setdefault(entry.target, []).append(entry)
        self._class_entries = ClassEntries()
        # An ordered set (a dict of None): the classes patched since a mark are its tail.
        self._patched_classes: dict[type, None] = {}
        self._attributes = AttributePatches()
        self._functions = FunctionPatches()
        self._watched = module_prefixes(self._pending)
        self.patched_modules: list[str] = []

    def is_watched(self, module_name: str) -> bool:
        return module_name in self._watched

    def libraries(self) -> frozenset[str]:
        return frozenset(target.split(".")[0] for target in self._pending)

    # --- resolving targets ------------------------------------------------------------
    def patch_loaded(self) -> list[str]:
        """Patch every target whose module is already imported; returns their names."""
        for target in list(self._pending):
            self._try_resolve(target)
        return list(self.patched_modules)

    def on_module_loaded(self, module: types.ModuleType) -> None:
        """Called by the import hook once ``module`` has executed."""
        name = module.__name__
        for target in [t for t in self._pending if t == name or t.startswith(name + ".")]:
            if not self._try_resolve(target, check=True):
                self._drop_if_missing(target, module)

    def _drop_if_missing(self, target: str, module: types.ModuleType) -> None:
        """A target that certainly does not exist in a module just imported: one warning
        (an import must never fail because of pypads), and it is no longer waited for."""
        reason = why_missing(target, executed=module)
        if reason is None:
            return
        for entry in self._pending.pop(target):
            library = target.split(".")[0]
            warn(f"pypads: {entry.source}: at {entry.json_path}.implementation.{library}: "
                 f"{target!r} does not exist: {reason}; it is not tracked", MappingWarning)

    def _try_resolve(self, target: str, check: bool = False) -> bool:
        """Patch ``target`` if its module is imported; False if it is not there (yet).

        Patching runs the library's own code (descriptors, metaclasses, ``__subclasses__``),
        which may raise anything. Then all that this target patched is undone, one warning
        names the module and the error, and the target is given up: the user's import (or
        ``PyPads()``) goes on with that module working, untracked."""
        mark = self._mark()
        entries: list[MappingEntry] = []
        try:
            found = resolve_loaded(target)
            if found is None:
                return False
            entries = self._pending.pop(target)
            self._apply(target, found, entries, check)
        except Exception as error:
            self._undo(mark)
            entries = self._pending.pop(target, entries)
            sources = ", ".join(sorted({f"{entry.source}: at {entry.json_path}" for entry in entries}))
            warn(f"pypads: patching module {module_of(target)!r} failed ({type(error).__name__}: {error}) "
                 f"for {target!r} ({sources}); the module works but is not tracked", MappingWarning)
            return True
        self.patched_modules.append(target)
        return True

    def _apply(self, target: str, found: Any, entries: list[MappingEntry], check: bool) -> None:
        if check and isinstance(found, types.ModuleType):
            # Checked at PyPads() when already imported; here, a module entry's patterns
            # that select nothing are a warning, as the import must go on.
            for entry in [entry for entry in entries if not is_shipped(entry.source)]:
                for rule, pattern in unmatched_patterns(entry, found):
                    warn(f"pypads: {entry.source}: at {entry.json_path}.hooks.{rule.hook}: "
                         f"{describe_unmatched(entry, rule, pattern, found)}", MappingWarning)
        if isinstance(found, type):
            for entry in entries:
                self._class_entries.add(found, entry)
            self._hook_subclasses(found)
            # Again where patched already: a library's subclass of a mapped base (XGBoost's of
            # BaseEstimator) is patched before its library's own entry resolves; that one counts too.
            self._patch_class_tree(found, again=True)
        elif isinstance(found, types.ModuleType):
            for entry in entries:
                self._patch_module(found, entry)
        elif isinstance(found, types.FunctionType):
            for entry in entries:
                hooks = frozenset(rule.hook for rule in entry.rules)
                self._track_function(found, hooks, entry.reading_for(found.__name__))

    # --- taking back what a failed target patched -----------------------------------------
    def _mark(self) -> tuple[tuple[int, int], int, int, int]:
        return (self._attributes.mark(), self._functions.mark(), len(self._patched_classes), self._class_entries.mark())

    def _undo(self, mark: tuple[tuple[int, int], int, int, int]) -> None:
        """Put back everything patched since ``mark``, newest first, as :meth:`restore` does."""
        attributes, functions, patched_classes, class_entries = mark
        self._functions.restore(functions)
        self._attributes.undo(attributes)
        for cls in list(self._patched_classes)[patched_classes:]:
            del self._patched_classes[cls]
        self._class_entries.undo(class_entries)

    def patch_new_subclass(self, cls: type) -> None:
        """Patch a class just created under a mapped one (from ``__init_subclass__``).

        It runs inside the ``class`` statement, in the user's module or the library's:
        a failure must not fail that statement. The class is left untracked, with one
        warning naming its module and the error."""
        mark = self._mark()
        try:
            self.patch_class(cls)
        except Exception as error:
            self._undo(mark)
            self._patched_classes[cls] = None  # given up: not tried again
            warn(f"pypads: patching {cls.__qualname__} of module {cls.__module__!r} failed "
                 f"({type(error).__name__}: {error}); what the class defines itself is not tracked", MappingWarning)

    # --- classes ----------------------------------------------------------------------
    def _patch_class_tree(self, root: type, again: bool = False) -> None:
        stack = [root]
        seen: set[type] = set()
        while stack:
            cls = stack.pop()
            if cls in seen:
                continue
            seen.add(cls)
            if again:
                self._patched_classes.pop(cls, None)
            self.patch_class(cls)
            stack.extend(type.__subclasses__(cls))

    def patch_class(self, cls: type) -> None:
        """Wrap the hooked methods ``cls`` defines or inherits from unmapped bases."""
        if cls in self._patched_classes:
            return
        entries = self._entries_for(cls)
        if not entries:
            return
        self._patched_classes[cls] = None
        names = {name for klass in cls.__mro__ for name in vars(klass)} - _NEVER
        for name in sorted(names):
            owner = next(klass for klass in cls.__mro__ if name in vars(klass))
            value = vars(owner)[name]
            hooks = frozenset().union(*(entry.hooks_for(name, value) for entry in entries))
            if not hooks:
                continue
            if owner is not cls and self._entries_for(owner) and self._hooks_of(owner, name, value) == hooks:
                continue  # the owner is mapped itself and tracks this attribute already
            if owner is not cls and not self._entries_for(owner) and self._track_inherited(name, value):
                continue  # an unmapped mixin's method: tracked in place, for mapped receivers
            value = self._attributes.unwrapped(value)
            make_site = functools.partial(self._make_site, name, hooks, reading_among(entries, name))
            if owner is cls and self._patch_descriptor_function(value, make_site):
                continue
            replacement = wrap_class_attribute(value, make_site)
            if replacement is None:
                continue
            if not self._attributes.set_on_class(cls, name, replacement, wrapped=value):
                return  # an immutable (built-in or extension) type: left untracked

    def _patch_descriptor_function(self, descriptor: Any, make_site: Callable[[str], CallSite]) -> bool:
        """Track a method descriptor in place by wrapping the function it holds (``fn`` of
        scikit-learn's ``available_if``). The descriptor keeps deciding availability and
        stays the very object in the class, so tools that patch it themselves (MLflow's
        autolog patches ``fn``) still find what they expect."""
        function = self._attributes.unwrapped(getattr(descriptor, "fn", None))
        if isinstance(descriptor, types.FunctionType) or not isinstance(function, types.FunctionType):
            return False
        if not can_track(function):
            return True  # a generator or coroutine: left alone, like everywhere else
        replacement = wrap_function(function, make_site("instance"))
        try:
            descriptor.fn = replacement
        except AttributeError:  # a read-only descriptor: the proxy will do
            return False
        self._attributes.set_on_object(descriptor, "fn", function, replacement)
        return True

    def _track_inherited(self, name: str, value: Any) -> bool:
        """Track a mixin's function, classmethod or ``available_if`` method in place;
        False for anything else (left to the old way: a wrapper in the subclass)."""
        function: Any
        if isinstance(value, classmethod):
            function, bound_to = value.__func__, "class"
        elif isinstance(value, types.FunctionType):
            function, bound_to = value, "instance"
        else:
            function, bound_to = getattr(value, "fn", None), "instance"
            if isinstance(value, staticmethod) or not isinstance(function, types.FunctionType):
                return False
        if can_track(function):
            self._functions.track(function, lambda: ReceiverSite(self, name, value, bound_to))
        return True  # a generator or coroutine: left alone, like everywhere else

    def site_for(self, cls: type, name: str, value: Any, bound_to: str) -> CallSite | None:
        """The call site of ``name`` for receivers of class ``cls``, or None if untracked."""
        hooks = self._hooks_of(cls, name, value)
        return self._make_site(name, hooks, self._class_entries.reading(cls, name), bound_to) if hooks else None

    def _entries_for(self, cls: type) -> list[MappingEntry]:
        return self._class_entries.of(cls)

    def _hooks_of(self, cls: type, name: str, value: Any) -> frozenset[str]:
        return frozenset().union(*(entry.hooks_for(name, value) for entry in self._entries_for(cls)))

    def _hook_subclasses(self, base: type) -> None:
        """Give ``base`` an ``__init_subclass__`` that patches every future subclass.

        An ``__init_subclass__`` written in Python that ``base`` defines or inherits is
        patched in place, so no class gains an attribute; only a class that has just
        ``object``'s gets one of its own."""
        inherited = next(vars(klass)["__init_subclass__"] for klass in base.__mro__ if "__init_subclass__" in vars(klass))
        function = inherited.__func__ if isinstance(inherited, classmethod) else None
        if isinstance(function, types.FunctionType) and can_track(function):
            self._functions.track(function, lambda: SubclassHook(self))
            return
        hook = new_init_subclass(base, vars(base).get("__init_subclass__", _MISSING), self)
        self._attributes.set_on_class(base, "__init_subclass__", hook)  # an immutable type: no subclasses patched

    # --- modules and functions --------------------------------------------------------
    def _patch_module(self, module: types.ModuleType, entry: MappingEntry) -> None:
        for name, value in list(vars(module).items()):
            if name.startswith("_") or isinstance(value, types.ModuleType) or not callable(value):
                continue
            hooks = entry.hooks_for(name, value)
            if not hooks:
                continue
            if isinstance(value, type):
                # A class selected by a module entry: all its public methods fire the hooks.
                rules = tuple(HookRule(hook=hook, always=True) for hook in sorted(hooks))
                self._class_entries.add(value, MappingEntry(entry.name, entry.other_names, f"{module.__name__}.{name}",
                                                          rules, entry.source))
                self._patch_class_tree(value)
            elif isinstance(value, types.FunctionType):
                self._track_function(value, hooks, entry.reading_for(name))

    def _track_function(self, function: types.FunctionType, hooks: frozenset[str], reading: CallReading | None) -> None:
        self._functions.track(function, lambda: self._make_site(function.__name__, hooks, reading, "none"))

    # --- undoing ----------------------------------------------------------------------
    def restore(self) -> None:
        """Put back every original object and forget all patches."""
        self._functions.restore()
        self._attributes.undo()
        self._patched_classes.clear()

