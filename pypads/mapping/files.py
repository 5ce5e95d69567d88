"""Finding, validating and choosing mapping files.

Every file is validated against ``schema.json`` and a few checks JSON Schema cannot
express (regexes compile, versions parse, implementations name the file's library)
before anything is patched, so that a bad file fails loudly instead of tracking nothing.

A file's text that passed the schema once is marked so (an empty file named by the
digest of the schema and the text, in ``$PYPADS_HOME/cache/mappings``), and is not
validated again: importing jsonschema costs each ``PyPads()`` 50–100 ms, a third of
pypads' start-up, to re-check the same shipped file. The other checks run every time. A
mark is trusted as far as ``$PYPADS_HOME`` is (who can write there can write the runs'
journals too); should building the file's model fail all the same, the mark lied, and
the schema names the error as it would have.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import metadata, resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from blake3 import blake3
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from pypads.errors import ConfigError, MappingError, MappingWarning, warn
from pypads.mapping.model import HookRule, MappingEntry, MappingFile
from pypads.mapping.targets import loaded_subclasses, resolve_loaded, unmatched_patterns, why_missing
from pypads.schemas import schema_error
from pypads.store import pypads_home

if TYPE_CHECKING:
    import jsonschema

ARGUMENT_SOURCE = "<mapping argument>"


@cache
def mapping_schema() -> dict[str, Any]:
    """The published JSON Schema of mapping files."""
    return json.loads(_schema_text())


@cache
def _schema_text() -> str:
    return resources.files("pypads.mapping").joinpath("schema.json").read_text()


def validation_mark(text: str) -> Path:
    """The file whose existence says that a mapping file's ``text`` passed the schema
    (see the module's docstring)."""
    digest = blake3(f"{_schema_text()}\0{text}".encode()).hexdigest()
    return pypads_home() / "cache" / "mappings" / digest


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


def read_mapping_file(path: str | Path) -> MappingFile:
    """Read and validate one mapping file."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise MappingError(source, "$", f"cannot read the file: {error}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        raise MappingError(source, "$", f"malformed JSON at {where}: {error.msg}") from None
    return _parse_once(document, text, source)


def _parse_once(document: Any, text: str, source: str) -> MappingFile:
    """:func:`parse_mapping`, without the schema for a ``text`` marked as validated."""
    mark = validation_mark(text)
    try:
        marked = mark.exists()
    except OSError:  # a cache folder this user may not search: as if unmarked
        marked = False
    if not marked:
        parsed = parse_mapping(document, source)
        try:
            mark.parent.mkdir(parents=True, exist_ok=True)
            mark.touch()
        except OSError:  # a read-only or full home: the file is validated again next time
            pass
        return parsed
    try:
        return _build(document, source)
    except MappingError:
        raise
    except Exception:  # the mark lied: a shape the schema never passed
        _check_schema(document, source)
        raise


def parse_mapping(document: Any, source: str = ARGUMENT_SOURCE) -> MappingFile:
    """Validate a mapping document (already parsed JSON) and build its model."""
    _check_schema(document, source)
    return _build(document, source)


def _check_schema(document: Any, source: str) -> None:
    error = schema_error(document, mapping_schema())
    if error is not None:
        raise MappingError(source, error.json_path, _describe(error))


def _build(document: Any, source: str) -> MappingFile:
    meta = document["metadata"]
    library = meta["library"]
    return MappingFile(
        source=source,
        library=library,
        distribution=meta.get("distribution", library),
        library_versions=_specifier(meta["library_versions"], source),
        mapping_version=_version(meta["mapping_version"], source),
        author=meta.get("author", ""),
        entries=tuple(
            _entry(entry, f"$.algorithms[{index}]", library, source)
            for index, entry in enumerate(document["algorithms"])
        ),
    )


def _describe(error: jsonschema.ValidationError) -> str:
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - allowed)
        if unknown and allowed:
            return f"unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(sorted(allowed))}"
    if error.validator == "enum":
        return f"{error.instance!r} is not one of {error.validator_value}"
    return error.message


def _specifier(text: str, source: str) -> SpecifierSet:
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise MappingError(
            source, "$.metadata.library_versions", f"{text!r} is not a PEP 440 version specifier"
        ) from None


def _version(text: str, source: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        raise MappingError(
            source, "$.metadata.mapping_version", f"{text!r} is not a PEP 440 version"
        ) from None


def _entry(raw: Mapping[str, Any], path: str, library: str, source: str) -> MappingEntry:
    implementation = raw["implementation"]
    unknown = sorted(set(implementation) - {library})
    if unknown:
        raise MappingError(
            source,
            f"{path}.implementation",
            f"unknown library {unknown[0]!r}: this file maps {library!r} (metadata.library)",
        )
    if library not in implementation:
        raise MappingError(source, f"{path}.implementation", f"no implementation for {library!r}")
    target = implementation[library]
    if target.split(".")[0] != library:
        raise MappingError(
            source, f"{path}.implementation.{library}", f"{target!r} is not inside the library {library!r}"
        )
    rules = tuple(
        _rule(hook, spec, f"{path}.hooks.{hook}", source) for hook, spec in raw["hooks"].items()
    )
    return MappingEntry(
        name=raw["name"],
        other_names=tuple(raw.get("other_names", ())),
        target=target,
        rules=rules,
        source=source,
        json_path=path,
    )


def _rule(hook: str, spec: Any, path: str, source: str) -> HookRule:
    if spec == "always":
        return HookRule(hook=hook, always=True)
    names: list[re.Pattern[str]] = []
    packages: list[re.Pattern[str]] = []
    for index, item in enumerate(spec):
        if isinstance(item, str):
            names.append(_regex(item, f"{path}[{index}]", source))
        elif item["type"] == "package_name":
            packages.append(_regex(item["name"], f"{path}[{index}].name", source))
        else:
            names.append(_regex(item["name"], f"{path}[{index}].name", source))
    return HookRule(hook=hook, names=tuple(names), packages=tuple(packages))


def _regex(pattern: str, path: str, source: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as error:
        raise MappingError(source, path, f"bad regular expression {pattern!r}: {error}") from None


def installed_version(distribution: str) -> Version | None:
    """The installed version of a distribution, read without importing the library."""
    try:
        return Version(metadata.version(distribution))
    except (metadata.PackageNotFoundError, InvalidVersion):
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
        version = installed_version(candidate.distribution)
        if version is None:
            continue
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
        version = installed_version(file.distribution)
        if version is None:
            continue
        if file.serves(version):
            users.append(file)
        else:
            _warn_unserved(file, f"{file.source}: at $.metadata.library_versions: {str(file.library_versions)!r} "
                                 "excludes it; the file is not used")
    return [*chosen.values(), *users]


def _warn_unserved(file: MappingFile, what: str) -> None:
    version = installed_version(file.distribution)
    warn(f"pypads: {file.distribution} {version} is installed, but {what}", MappingWarning, stacklevel=4)


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
