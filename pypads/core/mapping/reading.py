"""Reading one mapping file: its JSON validated against ``schema.json`` and a few
checks JSON Schema cannot express (regexes compile, versions parse, implementations name
the file's library), then built into a :class:`~pypads.core.mapping.model.MappingFile`, so
that a bad file fails loudly, naming the file, the place and the value, instead of
tracking nothing.

A file's text that passed the schema once is marked so (an empty file named by the
digest of the schema and the text, in ``$PYPADS_HOME/cache/mappings``), and is not
validated again: importing jsonschema costs each ``PyPads()`` 50–100 ms, a third of
pypads' start-up, to re-check the same shipped file. The other checks run every time. A
mark is trusted as far as ``$PYPADS_HOME`` is (who can write there can write the runs'
journals too); should building the file's model fail all the same, the mark lied, and
the schema names the error as it would have.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from blake3 import blake3
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from pypads.core.errors import MappingError
from pypads.core.home import pypads_home
from pypads.core.mapping.model import (
    CallReading,
    DataReading,
    EvalSets,
    HookRule,
    MappingEntry,
    MappingFile,
    Recorder,
    Source,
    Step,
)
from pypads.core.schemas import schema_error

if TYPE_CHECKING:
    import jsonschema

ARGUMENT_SOURCE = "<mapping argument>"


@cache
def mapping_schema() -> dict[str, Any]:
    """The published JSON Schema of mapping files."""
    schema: dict[str, Any] = json.loads(_schema_text())
    return schema


@cache
def _schema_text() -> str:
    return resources.files("pypads.core.mapping").joinpath("schema.json").read_text()


def validation_mark(text: str) -> Path:
    """The file whose existence says that a mapping file's ``text`` passed the schema
    (see the module's docstring)."""
    digest = blake3(f"{_schema_text()}\0{text}".encode()).hexdigest()
    return pypads_home() / "cache" / "mappings" / digest


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
        distributions=_names(meta.get("distribution", library)),
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
    return str(error.message)


def _names(distribution: str | list[str]) -> tuple[str, ...]:
    return (distribution,) if isinstance(distribution, str) else tuple(distribution)


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
        readings=tuple((name, _reading(spec, library, f"{path}.reading.{name}", source))
                       for name, spec in raw.get("reading", {}).items()),
    )


def _reading(raw: Mapping[str, Any], library: str, path: str, source: str) -> CallReading:
    record = raw.get("record")
    if record is not None and record.get("append") and record["append"].split(".")[0] != library:
        raise MappingError(source, f"{path}.record.append",
                           f"{record['append']!r} is not inside the library {library!r}")
    tables = raw.get("tables", {})
    for name, column in raw.get("charts", {}).items():
        if name not in tables:
            raise MappingError(source, f"{path}.charts.{name}", f"no table {name!r} in this reading's tables")
        if column not in tables[name]:
            raise MappingError(source, f"{path}.charts.{name}", f"table {name!r} has no column {column!r}")
    data, evals = raw.get("data"), raw.get("evals")
    return CallReading(
        params=tuple(parse_source(text if "." in text or text == "arguments" else f"arguments.{text}")
                     for text in raw.get("params", ())),
        model=raw.get("model"),
        flavour=raw.get("flavour"),
        curves=tuple(parse_source(text) for text in raw.get("curves", ())),
        scalars=tuple(_scalar(item) for item in raw.get("scalars", ())),
        record=Recorder(record["argument"], record.get("append")) if record is not None else None,
        tables=tuple((name, tuple((column, parse_source(text)) for column, text in columns.items()))
                     for name, columns in raw.get("tables", {}).items()),
        texts=tuple((name, parse_source(text)) for name, text in raw.get("texts", {}).items()),
        charts=tuple(raw.get("charts", {}).items()),
        data=tuple(DataReading(parse_source(item["features"]),
                               parse_source(item["targets"]) if "targets" in item else None)
                   for item in ([] if data is None else [data] if isinstance(data, dict) else data)),
        evals=None if evals is None else EvalSets(parse_source(evals)) if isinstance(evals, str)
        else EvalSets(parse_source(evals["sets"]), parse_source(evals["names"]), evals.get("unnamed"), evals.get("training")),
    )


def _scalar(item: str | Mapping[str, Any]) -> Source:
    if isinstance(item, str):
        return parse_source(item)
    found = parse_source(item["source"])
    absent_if = item.get("absent_if")
    return dataclasses.replace(found, label=item.get("name"), absent_if=float(absent_if) if absent_if is not None else None)


def parse_source(text: str) -> Source:
    """A source as the schema's pattern admits it (``instance.evals_result()``)."""
    root, *rest = text.split(".")
    argument = None
    if root == "arguments" and rest:
        argument, *rest = rest
    return Source(text, root, argument, tuple(_step(part) for part in rest))


def _step(part: str) -> Step:
    """``name``, ``name()`` or ``name(key='word', …)``, as the schema's pattern admits them."""
    name, called, inside = part.partition("(")
    keywords = tuple((key.strip(), value.strip().strip("'")) for key, _, value in
                     (item.partition("=") for item in inside.removesuffix(")").split(",") if item.strip()))
    return Step(name, bool(called), keywords)


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
