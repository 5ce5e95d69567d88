"""What importing a part of pypads loads, seen from a fresh interpreter: a part that the
script's process imports must not bring heavy libraries with it."""

from __future__ import annotations

import json
import subprocess
import sys


def modules_after(statement: str, candidates: set[str]) -> list[str]:
    """The top-level packages among ``candidates`` that ``statement`` leaves imported."""
    code = (f"import json, sys; {statement}; "
            f"print(json.dumps(sorted({{name.split('.')[0] for name in sys.modules}} & set({sorted(candidates)!r}))))")
    return json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def test_importing_the_evaluation_package_imports_neither_matplotlib_nor_scikit_learn():
    assert modules_after("import pypads.evaluation", {"matplotlib", "sklearn", "mlflow"}) == []
