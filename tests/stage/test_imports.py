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
    assert modules_after("import pypads.to_mlflow.evaluation", {"matplotlib", "sklearn", "mlflow"}) == []


def pypads_modules_after(statement: str) -> list[str]:
    code = f"import json, sys; {statement}; print(json.dumps(sorted(name for name in sys.modules if name.startswith('pypads'))))"
    return json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def test_patching_a_library_loads_the_call_core_alone():
    """The call core (calls, the logger contract, patches, the import hook, mapping files)
    is the ground floor: importing it loads nothing of the loggers, the run or the way to
    MLflow, and nothing heavy."""
    loaded = pypads_modules_after("import pypads.core.calls, pypads.core.logger, pypads.core.patching.patches, "
                                  "pypads.core.patching.importer, pypads.core.mapping")
    assert "pypads.core.patching.patches" in loaded  # the statement did import the core
    assert [name for name in loaded if name != "pypads" and not name.startswith("pypads.core")] == []
    assert modules_after("import pypads.core.patching.patches, pypads.core.mapping", {"mlflow", "loguru", "sklearn"}) == []
