"""A module that pypads cannot patch still imports and works: one warning names it and the
error, and nothing of it is tracked (no half-patched class whose calls land in the run).

Patching reads a mapped class's attributes, and those may be objects of the library's own
making. Here it is a descriptor whose ``__getattr__`` raises ``RuntimeError`` rather than
``AttributeError`` for a name it lacks (as lazy objects and proxies do): looking for the
``fn`` of an ``available_if``-like descriptor, or copying its ``__name__``, raises inside
pypads. Each case runs in a fresh interpreter, as a user's script would.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest
from conftest import only_run, run_script, store_of

pytestmark = pytest.mark.usefixtures("home_with_store")

FRAGILE = '''
class Exploding:
    """A method-like descriptor that raises RuntimeError for any ordinary attribute it lacks."""

    def __get__(self, instance, owner):
        return self if instance is None else (lambda: "predicted")

    def __getattr__(self, name):
        if name.startswith("__"):
            # Protocols (pickle asks for __getstate__ on Python 3.10, where object has
            # none) see a plain object: a user's class holding it can be saved as a model.
            raise AttributeError(name)
        raise RuntimeError(f"Exploding has no {name!r}")


class Model:
    def fit(self, data):
        self.total = sum(data)
        return self


class Broken:
    # "fit" sorts before "predict": it is patched before patching "predict" fails.
    def fit(self, data):
        self.total = sum(data)
        return self

    predict = Exploding()
'''


def fragile_library(tmp_path: Path, target: str) -> tuple[dict[str, str], Path]:
    """``fragile`` 1.0 installed in a folder of ``tmp_path``, and a mapping file whose
    entry maps ``target`` with ``fit`` and ``predict``."""
    site = tmp_path / "site"
    (site / "fragile").mkdir(parents=True)
    (site / "fragile" / "__init__.py").write_text(FRAGILE)
    (site / "fragile-1.0.dist-info").mkdir()
    (site / "fragile-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: fragile\nVersion: 1.0\n")
    mapping = tmp_path / "fragile.json"
    mapping.write_text(json.dumps({
        "metadata": {"library": "fragile", "library_versions": ">=1.0", "mapping_version": "1.0"},
        "algorithms": [{"name": "fragile", "implementation": {"fragile": target},
                        "hooks": {"pypads_fit": ["fit", "predict"]}}],
    }))
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    return {"PYTHONPATH": path}, mapping


def script(mapping: Path, import_first: bool, body: str) -> str:
    """A user's script: PyPads() with the mapping, ``fragile`` imported before or after it,
    every warning recorded and printed as ``WARNING <category>: <message>`` at the end."""
    tracker = f"tracker = PyPads(name='guard', mapping_paths=[{str(mapping)!r}], include_default_mappings=False)\n"
    return (
        "import warnings\n"
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    from pypads import PyPads\n"
        + textwrap.indent(("import fragile\n" + tracker) if import_first else (tracker + "import fragile\n"), "    ")
        + textwrap.indent(textwrap.dedent(body), "    ")
        + "tracker.end_run()\n"
        "for warning in caught:\n"
        "    print(f'WARNING {warning.category.__name__}: {warning.message}')\n"
    )


def warnings_in(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("WARNING ")]


@pytest.mark.parametrize("import_first", [False, True], ids=["imported after PyPads()", "imported before PyPads()"])
def test_a_module_that_cannot_be_patched_imports_works_and_is_not_tracked(tmp_path, import_first):
    environment, mapping = fragile_library(tmp_path, "fragile.Broken")
    body = """
        broken = fragile.Broken().fit([1, 2])
        print("fit", broken.total, "predict", broken.predict())
    """
    result = run_script(script(mapping, import_first, body), tmp_path, env=environment)
    assert result.returncode == 0, result.stderr
    assert "fit 3 predict predicted" in result.stdout
    about_fragile = [line for line in warnings_in(result.stdout) if "fragile" in line]
    assert len(about_fragile) == 1, result.stdout
    assert about_fragile[0].startswith("WARNING MappingWarning: ")
    assert "RuntimeError" in about_fragile[0] and "Exploding has no" in about_fragile[0]
    # Broken.fit was patched before Broken.predict failed: it must not be left tracked.
    assert only_run(store_of(tmp_path)).artifacts("calls") == []


def test_a_subclass_that_cannot_be_patched_is_still_defined(tmp_path):
    # The mapped class patches fine; the user's subclass brings the attribute that raises.
    # Patching it happens inside the user's ``class`` statement, which must not fail.
    environment, mapping = fragile_library(tmp_path, "fragile.Model")
    body = """
        class Mine(fragile.Model):
            predict = fragile.Exploding()
        mine = Mine().fit([4, 5])
        print("fit", mine.total, "predict", mine.predict())
    """
    result = run_script(script(mapping, False, body), tmp_path, env=environment)
    assert result.returncode == 0, result.stderr
    assert "fit 9 predict predicted" in result.stdout
    about_mine = [line for line in warnings_in(result.stdout) if "Mine" in line]
    assert len(about_mine) == 1, result.stdout
    assert "'__main__'" in about_mine[0] and "RuntimeError" in about_mine[0]
    # Mine inherits fit from the mapped Model, whose patch stays: that call is tracked
    # (named after the receiver's class); only what Mine defines itself is left alone.
    assert only_run(store_of(tmp_path)).artifacts("calls") == ["calls/Mine.fit.jsonl"]
