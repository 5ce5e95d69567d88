"""Finding and choosing mapping files: the shipped ones, the user's, per library the
ones that serve its installed version; and the check of entries whose library is
already imported. Each file is read by :mod:`pypads.core.mapping.reading`."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from pypads.core.errors import ConfigError, MappingError, MappingWarning, warn
from pypads.core.mapping.model import HookRule, MappingEntry, MappingFile
from pypads.core.mapping.reading import parse_mapping, read_mapping_file
from pypads.core.mapping.targets import loaded_subclasses, resolve_loaded, unmatched_patterns, why_missing


def default_mapping_paths() -> list[Path]:
    """The mapping files shipped with pypads.

    An installed wheel carries them as ``pypads/default_mappings``; a source checkout
    keeps them in the top-level ``mappings/`` folder where contributors edit them.
    """
    package_dir = Path(str(resources.files("pypads")))
    for folder in (package_dir / "default_mappings", package_dir.parent / "mappings"):
        if folder.is_dir():
            return sorted(folder.glob("*.json"))
    return []


def is_shipped(source: str) -> bool:
    """Whether ``source`` is one of the mapping files shipped with pypads."""
    return source in _shipped_sources()


@cache
def _shipped_sources() -> frozenset[str]:
    return frozenset(str(path) for path in default_mapping_paths())


def installed_version(distribution: str) -> Version | None:
    """The installed version of a distribution, read without importing the library."""
    try:
        return Version(metadata.version(distribution))
    except (metadata.PackageNotFoundError, InvalidVersion):
        return None


def installed(file: MappingFile) -> tuple[str, Version] | None:
    """The first of ``file``'s distributions that is installed, and its version."""
    for distribution in file.distributions:
        version = installed_version(distribution)
        if version is not None:
            return distribution, version
    return None


def choose_mappings(
    defaults: Iterable[MappingFile], extra: Iterable[MappingFile]
) -> list[MappingFile]:
    """The files to use: per library the newest default file serving the installed
    version, plus every extra (user) file serving it. Files for libraries that are not
    installed are left out: they have nothing to track. A user's file, or the shipped
    files of an installed library, that do not serve its version are left out with one
    warning each: old files are normal, but an untracked library should not be silent."""
    chosen: dict[str, MappingFile] = {}
    unserved: dict[str, list[MappingFile]] = {}
    for candidate in defaults:
        found = installed(candidate)
        if found is None:
            continue
        version = found[1]
        if not candidate.serves(version):
            unserved.setdefault(candidate.library, []).append(candidate)
            continue
        best = chosen.get(candidate.library)
        if best is None or candidate.mapping_version > best.mapping_version:
            chosen[candidate.library] = candidate
    for library, files in unserved.items():
        if library not in chosen:
            ranges = ", ".join(f"{Path(file.source).name}: {file.library_versions}" for file in files)
            _warn_unserved(files[0], f"no shipped mapping file serves it ({ranges}); {library} is not tracked")
    users = []
    for file in extra:
        found = installed(file)
        if found is None:
            continue
        if file.serves(found[1]):
            users.append(file)
        else:
            _warn_unserved(file, f"{file.source}: at $.metadata.library_versions: {str(file.library_versions)!r} "
                                 "excludes it; the file is not used")
    return [*chosen.values(), *users]


def _warn_unserved(file: MappingFile, what: str) -> None:
    distribution, version = installed(file) or (file.distribution, None)
    warn(f"pypads: {distribution} {version} is installed, but {what}", MappingWarning, stacklevel=4)


def load_mappings(
    mapping_paths: Iterable[str | Path] = (),
    mapping: Mapping[str, Any] | None = None,
    include_defaults: bool = True,
) -> list[MappingFile]:
    """Read, validate and choose every mapping file ``PyPads()`` was given, and check
    the entries whose library is already imported (see :func:`check_loaded_entries`)."""
    defaults = [read_mapping_file(path) for path in default_mapping_paths()] if include_defaults else []
    extra = [read_mapping_file(path) for path in _paths(mapping_paths)]
    if mapping is not None:
        extra.append(parse_mapping(mapping))
    chosen = choose_mappings(defaults, extra)
    check_loaded_entries(file for file in chosen if not is_shipped(file.source))
    return chosen


def _paths(mapping_paths: Any) -> list[str | Path]:
    # A single path would otherwise be read character by character ("f", "i", ...).
    if isinstance(mapping_paths, (str, bytes, os.PathLike)):
        raise ConfigError(f"mapping_paths: expected a list of files, got the single path {mapping_paths!r} "
                          f"(write mapping_paths=[{mapping_paths!r}])")
    try:
        paths = list(mapping_paths)
    except TypeError:
        raise ConfigError(f"mapping_paths: expected a list of files, got {type(mapping_paths).__name__} "
                          f"{mapping_paths!r}") from None
    for index, path in enumerate(paths):
        if not isinstance(path, (str, os.PathLike)):
            raise ConfigError(f"mapping_paths[{index}]: expected a file path, got {type(path).__name__} {path!r}")
    return paths


def check_loaded_entries(files: Iterable[MappingFile]) -> None:
    """Raise a MappingError for an entry naming a class, function or module that does
    not exist, or a pattern matching no attribute of a module, where the module is
    already imported. A class may gain subclasses that match later (its library's
    other modules, the user's own classes), so a pattern matching nothing in a class's
    loaded tree is one warning instead. Entries of libraries not imported yet are
    checked by the import hook (with warnings: it never raises into an import)."""
    for file in files:
        for entry in file.entries:
            where = f"{entry.json_path}.implementation.{file.library}"
            reason = why_missing(entry.target)
            if reason is not None:
                raise MappingError(file.source, where, f"{entry.target!r} does not exist: {reason}")
            found = resolve_loaded(entry.target)
            for rule, pattern in unmatched_patterns(entry, found):
                problem = describe_unmatched(entry, rule, pattern, found)
                if isinstance(found, type):
                    warn(f"pypads: {file.source}: at {entry.json_path}.hooks.{rule.hook}: {problem}",
                         MappingWarning, stacklevel=4)
                else:
                    raise MappingError(file.source, f"{entry.json_path}.hooks.{rule.hook}", problem)


def describe_unmatched(entry: MappingEntry, rule: HookRule, pattern: str, found: Any) -> str:
    """The problem of a hook pattern that selects nothing in ``found``."""
    kind = "module name" if any(compiled.pattern == pattern for compiled in rule.packages) else "attribute name"
    if isinstance(found, type):
        where = f"the class {entry.target}, its bases or its {loaded_subclasses(found)} loaded subclasses"
    else:
        where = f"the module {entry.target}"
    return f"the {kind} pattern {pattern!r} matches nothing in {where}, so {rule.hook} never fires there"
