"""``pypads mappings check FILE…``: validate mapping files with pypads' own loading,
and show what each would patch in the installed library.

A file is bad, and the exit status 1, when ``PyPads(mapping_paths=[FILE])`` would
refuse it: it breaks the schema or a rule a schema cannot express (``read_mapping_file``),
or, with its library imported, an entry names something that does not exist or a
module pattern that matches nothing (``check_loaded_entries``). A class pattern that
matches nothing yet is a warning, as in ``PyPads()``: later subclasses may match it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import types
import warnings
from collections.abc import Iterator
from typing import Any

from pypads.core import (
    CallReading,
    HookRule,
    MappingEntry,
    MappingError,
    MappingFile,
    check_loaded_entries,
    describe_unmatched,
    installed,
    loaded_subclasses,
    read_mapping_file,
    resolve_loaded,
    unmatched_patterns,
    why_missing,
)

DESCRIPTIONS = {
    "mappings": "Work with mapping files (JSON files saying which classes and functions of a library "
                "pypads tracks, and with which hooks).",
}
CHECK_DESCRIPTION = (
    "Validate mapping files as PyPads() does and show, for the installed library, what each entry "
    "would patch: the attributes each hook selects, and the entries that do not resolve. Exit status 1 "
    "if a file would be refused by PyPads(), with the file, the JSON path and the problem."
)
SHOWN_NAMES = 6  # attribute names listed per hook before "and N more"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = actions.add_parser("check", help="validate mapping files and show what they would patch",
                               description=CHECK_DESCRIPTION)
    check.add_argument("files", nargs="+", metavar="FILE", help="mapping files (.json)")
    check.add_argument("--import", dest="modules", metavar="MODULE", action="append", default=[],
                       help="import this module first, so that its classes count as subclasses of mapped "
                            "classes (e.g. sklearn.ensemble); repeatable")


def main(options: argparse.Namespace) -> int:
    for module in options.modules:
        failure = _import_for(module)
        if failure is not None or module not in sys.modules:
            print(f"error: --import {module}: {failure or 'no such module'}", file=sys.stderr)
            return 1
    bad = [path for path in options.files if not check_file(path)]
    if bad:
        print(f"{len(bad)} of {len(options.files)} mapping file(s) would be refused: {', '.join(bad)}",
              file=sys.stderr)
        return 1
    print(f"{len(options.files)} mapping file(s) valid")
    return 0


def check_file(path: str) -> bool:
    """Print what ``path`` would patch; False (after printing why) if it is bad."""
    try:
        file = read_mapping_file(path)
    except MappingError as error:
        print(f"{path}: INVALID", flush=True)
        print(f"error: {error}", file=sys.stderr, flush=True)
        return False
    found = installed(file)
    names = " or ".join(file.distributions)
    heading = (f"{path}: library {file.library} (distribution {names}), mapping version "
               f"{file.mapping_version}, for versions {file.library_versions or 'any'}")
    print(heading)
    if found is None:
        print(f"  {names} is not installed: PyPads() leaves this file out, nothing to patch")
        return True
    distribution, version = found
    if not file.serves(version):
        print(f"  {distribution} {version} is installed, outside {file.library_versions}: "
              "PyPads() leaves this file out (with a warning)")
    else:
        print(f"  {distribution} {version} is installed")
    # Every module first: a class's subclasses that other entries' modules define count too.
    failures = {entry.target: _import_for(entry.target) for entry in file.entries}
    resolved = 0
    for entry in file.entries:
        ok, lines = describe_entry(entry, failures[entry.target])
        resolved += ok
        for line in lines:
            print(f"  {line}")
    print(f"  {file.library}: {len(file.entries)} entries, {resolved} resolve, {len(file.entries) - resolved} do not")
    return _refused(file) is None


def _refused(file: MappingFile) -> MappingError | None:
    """The error ``PyPads()`` would raise for this file, with its library imported."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # class patterns matching nothing: listed per entry already
            check_loaded_entries([file])
    except MappingError as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
        return error
    return None


def describe_entry(entry: MappingEntry, failure: str | None) -> tuple[bool, list[str]]:
    """Whether the entry resolves, and lines saying what it would patch or why not
    (``failure``: why its module could not be imported)."""
    where = f"{entry.json_path} {entry.name!r} -> {entry.target}"
    if failure is not None:
        return False, [f"does not resolve: {where}: {failure}"]
    reason = why_missing(entry.target)
    found = resolve_loaded(entry.target)
    if reason is not None or found is None:
        return False, [f"does not resolve: {where}: {reason or 'not found in the imported modules'}"]
    lines = [f"resolves: {where} ({_kind(found)})"]
    for hook, names in _selected(entry, found).items():
        more = len(names) - SHOWN_NAMES
        shown = ", ".join(names[:SHOWN_NAMES]) + (f" and {more} more" if more > 0 else "")
        lines.append(f"    {hook}: {len(names)} attribute(s): {shown}" if names else f"    {hook}: nothing")
    lines += _unmatched(entry, found)
    lines += [f"    reads {name}: {_reading_text(reading)}" for name, reading in entry.readings]
    return True, lines


def _reading_text(reading: CallReading) -> str:
    """What a reading takes of a call, in a line."""
    parts = [f"params from {', '.join(source.text for source in reading.params)}"] if reading.params else []
    if reading.data:
        first = reading.data[0]
        parts.append(f"data from {first.features.text}" + (f" and {first.targets.text}" if first.targets else "")
                     + (f" (or {len(reading.data) - 1} other(s))" if len(reading.data) > 1 else ""))
    if reading.evals is not None:
        parts.append(f"evaluation sets from {reading.evals.sets.text}"
                     + (f" named by {reading.evals.names.text}" if reading.evals.names else ""))
    if reading.model is not None:
        parts.append(f"the model is its {reading.model} ({reading.flavour or 'sklearn'} flavour)")
    for kind, sources in (("curves", reading.curves), ("values", reading.scalars)):
        if sources:
            parts.append(f"{kind} from {', '.join(source.text for source in sources)}")
    charts = dict(reading.charts)
    parts += [f"{name}.csv" + (f" and a chart of its {charts[name]}" if name in charts else "") for name, _ in reading.tables]
    parts += [f"{name}.txt" for name, _ in reading.texts]
    if reading.record is not None:
        parts.append(f"records into {reading.record.argument}")
    return "; ".join(parts) or "nothing"


def _unmatched(entry: MappingEntry, found: Any) -> list[str]:
    """A line per hook whose patterns match nothing: an error in a module, as in
    ``PyPads()``; a warning in a class, whose later subclasses may match."""
    by_hook: dict[str, list[tuple[HookRule, str]]] = {}
    for rule, pattern in unmatched_patterns(entry, found):
        by_hook.setdefault(rule.hook, []).append((rule, pattern))
    level = "warning" if isinstance(found, type) else "error"
    lines = []
    for hook, pairs in by_hook.items():
        problem = describe_unmatched(entry, *pairs[0], found)
        if len(pairs) > 1:  # one line for all, in describe_unmatched's words
            patterns = ", ".join(repr(pattern) for _, pattern in pairs)
            problem = problem.replace(f"pattern {pairs[0][1]!r} matches", f"patterns {patterns} match")
        lines.append(f"    {level}: at {entry.json_path}.hooks.{hook}: {problem}")
    return lines


def _import_for(target: str) -> str | None:
    """Import the modules on ``target``'s path (a mapping names classes and functions
    inside them); the reason if one of them fails to import."""
    parts = target.split(".")
    for length in range(1, len(parts) + 1):
        name = ".".join(parts[:length])
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name == name:  # the rest of the path is attributes, not modules
                return None
            return f"importing {name} failed: {error}"
        except Exception as error:  # noqa: BLE001 - the library's own import failed
            return f"importing {name} failed: {type(error).__name__}: {error}"
    return None


def _kind(found: Any) -> str:
    if isinstance(found, type):
        return f"a class, and {loaded_subclasses(found)} subclass(es) loaded so far"
    if isinstance(found, types.ModuleType):
        return "a module"
    return "a function" if callable(found) else type(found).__name__


def _selected(entry: MappingEntry, found: Any) -> dict[str, list[str]]:
    """Per hook, the attribute names it selects: a function fires its hooks itself."""
    if not isinstance(found, (type, types.ModuleType)):
        return {rule.hook: [entry.target.rsplit(".", 1)[-1]] for rule in entry.rules}
    selected: dict[str, set[str]] = {rule.hook: set() for rule in entry.rules}
    for name, value in _candidates(found):
        for hook in entry.hooks_for(name, value):
            selected[hook].add(name)
    return {hook: sorted(names) for hook, names in selected.items()}


def _candidates(found: Any) -> Iterator[tuple[str, Any]]:
    """The attributes pypads would look at: a module's public callables, a class's
    callables through its bases and loaded subclasses."""
    if isinstance(found, types.ModuleType):
        for name, value in vars(found).items():
            if not name.startswith("_") and callable(value) and not isinstance(value, types.ModuleType):
                yield name, value
        return
    stack, seen = [found], set()
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        stack.extend(type.__subclasses__(cls))
        for klass in cls.__mro__:
            for name, value in vars(klass).items():
                if callable(value) or isinstance(value, (classmethod, staticmethod, property)):
                    yield name, value
