"""What a mapping file says, once validated: entries that select attributes for hooks."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
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

    def selects(self, attribute: str, module: str) -> bool:
        """Whether the attribute named ``attribute``, defined in ``module``, fires the hook."""
        if self.always:
            return not attribute.startswith("_")
        if any(pattern.fullmatch(attribute) for pattern in self.names):
            return True
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

    # Every class scikit-learn defines after PyPads() is matched attribute by attribute,
    # and the same names (fit, predict, get_params…) come back in each: 160 classes made
    # 30,000 pattern matches, a sixth of a second of the script's start. The answers are
    # kept per entry, by attribute name and module: a frozen dataclass rehashes all its
    # rules at every lookup of a key that holds them.
    _answers: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def hooks_for(self, attribute: str, value: Any) -> frozenset[str]:
        """The hooks the attribute ``attribute`` (whose value is ``value``) fires."""
        module = (getattr(value, "__module__", None) or "") if any(rule.packages for rule in self.rules) else ""
        key = (attribute, module)
        hooks = self._answers.get(key)
        if hooks is None:
            hooks = self._answers[key] = frozenset(rule.hook for rule in self.rules if rule.selects(attribute, module))
        return hooks


@dataclass(frozen=True)
class MappingFile:
    """A validated mapping file for one library and a range of its versions."""

    source: str
    library: str
    # The names the library may be installed under, in order: one module can come from
    # several distributions (xgboost and xgboost-cpu).
    distributions: tuple[str, ...]
    library_versions: SpecifierSet
    mapping_version: Version
    author: str
    entries: tuple[MappingEntry, ...]

    @property
    def distribution(self) -> str:
        """The library's usual distribution name, for messages."""
        return self.distributions[0]

    def serves(self, installed: Version) -> bool:
        return self.library_versions.contains(installed, prereleases=True)
