"""The package's layout: four floors, imports pointing down, no cycle between modules.

Read from the source, so a cycle is found however the modules happen to be imported today."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "pypads"


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


# The floors, from the ground up; every other module of pypads is on the top floor
# (PyPads, start-up, reading runs back, the command line, the seed's faces).
FLOORS = ("pypads.core", "pypads.to_mlflow", "pypads.run", "pypads.recording")


def floor_of(module: str) -> int:
    for number, floor in enumerate(FLOORS, start=1):
        if module == floor or module.startswith(floor + "."):
            return number
    return len(FLOORS) + 1


def type_checking_blocks(tree: ast.Module) -> list[ast.stmt]:
    return [statement for node in tree.body
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test) for statement in node.body]


def imports_of(path: Path, known: dict[str, Path], type_only: bool = False) -> set[str]:
    """The pypads modules ``path`` imports when it runs (imports inside functions are not
    run at import), and with ``type_only`` those of its ``if TYPE_CHECKING:`` blocks too."""
    found = set()
    tree = ast.parse(path.read_text())
    for node in [*tree.body, *(type_checking_blocks(tree) if type_only else [])]:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pypads"):
            for alias in node.names:  # a submodule imported by name is an edge to it, not to its package
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in known else node.module)
    return found


def cycle_in(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the graph, as the list of its modules, or None."""
    state: dict[str, str] = {}  # "open" while on the path, "done" once explored
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = "open"
        path.append(name)
        for target in sorted(graph[name]):
            if state.get(target) == "open":
                return path[path.index(target):] + [target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[name] = "done"
        return None

    for name in sorted(graph):
        if name not in state and (found := visit(name)):
            return found
    return None


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


def test_the_cycle_check_finds_a_cycle():
    assert cycle_in({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert cycle_in({"a": {"b"}, "b": set()}) is None
