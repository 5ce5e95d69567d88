"""Finding, validating and choosing mapping files.

Every file is validated against ``schema.json`` and a few checks JSON Schema cannot
express (regexes compile, versions parse, implementations name the file's library)
before anything is patched, so that a bad file fails loudly instead of tracking nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import metadata, resources
from pathlib import Path
from typing import Any

import jsonschema
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from pypads.errors import MappingError
from pypads.mapping.model import HookRule, MappingEntry, MappingFile

ARGUMENT_SOURCE = "<mapping argument>"


@cache
def mapping_schema() -> dict[str, Any]:
    """The published JSON Schema of mapping files."""
    return json.loads(resources.files("pypads.mapping").joinpath("schema.json").read_text())


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
    return parse_mapping(document, source)


def parse_mapping(document: Any, source: str = ARGUMENT_SOURCE) -> MappingFile:
    """Validate a mapping document (already parsed JSON) and build its model."""
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(mapping_schema()).iter_errors(document)
    )
    if error is not None:
        raise MappingError(source, error.json_path, _describe(error))
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
    installed are left out: they have nothing to track."""
    chosen: dict[str, MappingFile] = {}
    for candidate in defaults:
        version = installed_version(candidate.distribution)
        if version is None or not candidate.serves(version):
            continue
        best = chosen.get(candidate.library)
        if best is None or candidate.mapping_version > best.mapping_version:
            chosen[candidate.library] = candidate
    users = [
        file
        for file in extra
        if (version := installed_version(file.distribution)) is not None and file.serves(version)
    ]
    return [*chosen.values(), *users]


def load_mappings(
    mapping_paths: Iterable[str | Path] = (),
    mapping: Mapping[str, Any] | None = None,
    include_defaults: bool = True,
) -> list[MappingFile]:
    """Read, validate and choose every mapping file ``PyPads()`` was given."""
    defaults = [read_mapping_file(path) for path in default_mapping_paths()] if include_defaults else []
    extra = [read_mapping_file(path) for path in mapping_paths]
    if mapping is not None:
        extra.append(parse_mapping(mapping))
    return choose_mappings(defaults, extra)
