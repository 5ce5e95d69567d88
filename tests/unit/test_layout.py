"""The package's layout: four floors, imports pointing down, no cycle between modules,
modules one reads in one sitting, and the floors' picture in docs/design.md up to date.

Read from the source (tools/layout.py), so a cycle is found however the modules happen
to be imported today."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository's own tools

from tools.layout import DESIGN, FLOORS, cycle_in, design_block, floor_of, imports_of, modules, picture  # noqa: E402


def test_no_module_of_pypads_imports_itself_back_through_others():
    known = modules()
    graph = {name: imports_of(path, known) - {name} for name, path in known.items()}
    assert len(graph) > 40 and graph["pypads.tracker"]  # the walk sees the package
    assert cycle_in(graph) is None, " -> ".join(cycle_in(graph) or [])


def test_no_cycle_even_through_type_only_imports():
    known = modules()
    graph = {name: imports_of(path, known, type_only=True) - {name} for name, path in known.items()}
    assert cycle_in(graph) is None, " -> ".join(cycle_in(graph) or [])


def test_imports_point_down_the_floors():
    """What runs at import only reaches floors below or the module's own; a type-only
    import may name a class of a floor above (the core's calls carry the run)."""
    known = modules()
    assert all(any(floor_of(name) == number for name in known) for number in range(1, len(FLOORS) + 2))
    upward = sorted(f"{name} -> {target}" for name, path in known.items()
                    for target in imports_of(path, known) if floor_of(target) > floor_of(name))
    assert upward == []


# The floors, each a package whose ``__init__`` is its face: the floors above import them
# through it alone.
FACES = ("pypads.core", "pypads.to_mlflow", "pypads.run", "pypads.recording")


def test_the_floors_above_reach_a_floor_with_a_face_only_through_it():
    known = modules()
    reached = sorted(f"{name} -> {target}" for name, path in known.items()
                     for target in imports_of(path, known, type_only=True, through_faces=False)
                     for face in FACES
                     if target.startswith(face + ".") and floor_of(name) > floor_of(face))
    assert reached == []


def test_no_module_takes_a_name_from_its_own_floors_face():
    """A face loads its whole floor: a module of the floor that imported it would import
    itself half-way (and the cycle checks, which follow a name to its module, miss it)."""
    known = modules()
    own = sorted(f"{name} -> {target}" for name, path in known.items()
                 for target in imports_of(path, known, type_only=True, through_faces=False)
                 if target in FACES and name.startswith(target + "."))
    assert own == []


def test_the_cycle_check_finds_a_cycle():
    assert cycle_in({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert cycle_in({"a": {"b"}, "b": set()}) is None


def test_every_module_reads_in_one_sitting():
    longer = {name: len(path.read_text().splitlines()) for name, path in modules().items()}
    assert {name: lines for name, lines in longer.items() if lines > 300} == {}


def test_the_floors_picture_in_the_design_document_is_the_codes():
    drawn = picture()
    assert "core -->" not in drawn  # the ground floor has no arrow out
    assert design_block(DESIGN.read_text()) == drawn, "the picture is out of date: run python3 dev.py floors"
