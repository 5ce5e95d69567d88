"""pypads' floors, read from the source: which module is on which floor, what it imports,
and the picture of the floors that ``docs/design.md`` shows.

Read from the code's own imports (``ast``), nothing run, so the picture cannot drift from
the code: ``python3 dev.py floors`` writes it into ``docs/design.md``, and
``tests/unit/test_layout.py`` fails when the two differ.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pypads"
DESIGN = ROOT / "docs" / "design.md"
BEGIN, END = "<!-- floors: written by `python3 dev.py floors` -->", "<!-- /floors -->"

# The floors, from the ground up: (package, what it owns). Every other module of pypads
# is on the top floor: PyPads, its config and start-up, reading runs back, the command
# line, and the names users type (pypads.base, pypads.callmonitor, pypads.privacy).
FLOORS = (
    ("pypads.core", "the call core: a tracked call, the logger contract, patches, the import hook, mapping files"),
    ("pypads.to_mlflow", "the way to MLflow: journal, link, uploader, evaluation, the one accessor of MLflow"),
    ("pypads.run", "the run: its context, the writer loggers hand values to, its end"),
    ("pypads.recording", "what is recorded: loggers, run loggers, call database, content helpers, events"),
)
TOP = "PyPads, config, start-up, results, cli, the seed's names"


def modules() -> dict[str, Path]:
    """Every module of pypads by dotted name (a package by its ``__init__``)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def floor_of(module: str) -> int:
    """The floor of ``module``: 1 for the call core up to 4, then the top floor."""
    for number, (floor, _) in enumerate(FLOORS, start=1):
        if module == floor or module.startswith(floor + "."):
            return number
    return len(FLOORS) + 1


def _type_checking_blocks(tree: ast.Module) -> list[ast.stmt]:
    return [statement for node in tree.body
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test) for statement in node.body]


def imports_of(path: Path, known: dict[str, Path], type_only: bool = False, through_faces: bool = True) -> set[str]:
    """The pypads modules ``path`` imports when it runs (imports inside functions are not
    run at import), and with ``type_only`` those of its ``if TYPE_CHECKING:`` blocks too.

    A name taken from a floor's face (``from pypads.core import Call``) is an edge to the
    module it lives in, which is all the face loads for it; without ``through_faces``,
    an edge to the face itself (the module the statement names)."""
    found = set()
    tree = ast.parse(path.read_text())
    for node in [*tree.body, *(_type_checking_blocks(tree) if type_only else [])]:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pypads"):
            homes = face_homes(known[node.module]) if through_faces and node.module in known else {}
            for alias in node.names:  # a submodule imported by name is an edge to it, not to its package
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in known else homes.get(alias.name, node.module))
    return found


def face_homes(path: Path) -> dict[str, str]:
    """For a face (a package's ``__init__`` that hands on names of its modules): each name
    it offers and the module it takes it from."""
    if path.name != "__init__.py":
        return {}
    return {alias.asname or alias.name: node.module for node in ast.parse(path.read_text()).body
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pypads")
            for alias in node.names}


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


def picture() -> str:
    """The floors as a Mermaid flowchart: each floor with its packages and modules, and an
    arrow per pair of floors labelled with how many module imports run along it."""
    known = modules()
    parts_on: dict[int, set[str]] = {}
    arrows: Counter[tuple[int, int]] = Counter()
    for name, path in known.items():
        floor = floor_of(name)
        prefix = FLOORS[floor - 1][0] if floor <= len(FLOORS) else "pypads"
        rest = name[len(prefix) + 1:].split(".")[0] if name != prefix else ""
        if rest:
            parts_on.setdefault(floor, set()).add(rest)
        for target in imports_of(path, known):
            if floor_of(target) != floor:
                arrows[floor, floor_of(target)] += 1
    names = {number: floor.removeprefix("pypads.") for number, (floor, _) in enumerate(FLOORS, start=1)}
    names[len(FLOORS) + 1] = "top"
    text = ["```mermaid", "flowchart TB"]
    for number in range(len(FLOORS) + 1, 0, -1):
        owns = FLOORS[number - 1][1] if number <= len(FLOORS) else TOP
        shown = ", ".join(sorted(parts_on.get(number, ())))
        title = f"pypads.{names[number]}" if number <= len(FLOORS) else "pypads (top)"
        text.append(f'    {names[number]}["<b>{number}. {title}</b><br/>{owns}<br/><i>{shown}</i>"]')
    for (source, target), count in sorted(arrows.items(), key=lambda item: (-item[0][0], -item[0][1])):
        text.append(f"    {names[source]} -->|{count}| {names[target]}")
    text.append("```")
    return "\n".join(text)


def design_block(document: str) -> str | None:
    """The picture's block in ``docs/design.md`` as it stands (None if it has none)."""
    start, end = document.find(BEGIN), document.find(END)
    if start < 0 or end < start:
        return None
    return document[start + len(BEGIN):end].strip("\n")


def write_picture() -> None:
    """Write :func:`picture` into ``docs/design.md`` between its markers."""
    document = DESIGN.read_text()
    start, end = document.find(BEGIN), document.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"{DESIGN}: no {BEGIN} ... {END} block to write the picture into")
    DESIGN.write_text(document[:start + len(BEGIN)] + "\n" + picture() + "\n" + document[end:])
