"""What a mapping file says, once validated: entries that select attributes for hooks."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version


@dataclass(frozen=True)
class HookRule:
    """Which attributes of a mapped object fire one hook.

    ``always`` selects every public callable; ``names`` match the attribute name and
    ``packages`` the module that defines the attribute (the seed's PackageNameHook).
    Patterns must match the whole name.
    """

    hook: str
    always: bool = False
    names: tuple[re.Pattern[str], ...] = ()
    packages: tuple[re.Pattern[str], ...] = ()

    def selects(self, attribute: str, value: Any) -> bool:
        if self.always:
            return not attribute.startswith("_")
        if any(pattern.fullmatch(attribute) for pattern in self.names):
            return True
        module = getattr(value, "__module__", None) or ""
        return any(pattern.fullmatch(module) for pattern in self.packages)


@dataclass(frozen=True)
class MappingEntry:
    """One entry of ``algorithms``: a class, function or module and its hook rules."""

    name: str
    other_names: tuple[str, ...]
    target: str
    rules: tuple[HookRule, ...]
    source: str
    # Where the entry stands in its file ("$.algorithms[0]"), for error messages.
    json_path: str = "$"

    def hooks_for(self, attribute: str, value: Any) -> frozenset[str]:
        return frozenset(rule.hook for rule in self.rules if rule.selects(attribute, value))


@dataclass(frozen=True)
class MappingFile:
    """A validated mapping file for one library and a range of its versions."""

    source: str
    library: str
    distribution: str
    library_versions: SpecifierSet
    mapping_version: Version
    author: str
    entries: tuple[MappingEntry, ...]

    def serves(self, installed: Version) -> bool:
        return self.library_versions.contains(installed, prereleases=True)
