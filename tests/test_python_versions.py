"""The Pythons the project supports, as dev.py and CI find them: the range comes from
``requires-python``, an interpreter counts only if it really runs as that version, and a
missing one is named with how to get it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def dev_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dev_under_test", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def version_tuple(version: str) -> tuple[int, int]:
    major, minor = version.split(".")
    return int(major), int(minor)


def test_the_interpreter_running_the_suite_is_in_the_supported_range():
    oldest, newest = dev_script().supported_range()
    assert (oldest, newest) == ("3.10", "3.13")  # what README and requires-python promise
    assert version_tuple(oldest) <= sys.version_info[:2] <= version_tuple(newest)


def test_a_pyenv_shim_that_cannot_run_is_passed_over_for_the_installed_version(tmp_path, monkeypatch):
    # pyenv puts python3.X shims on PATH for every installed version, but a shim exits 127
    # unless that version is selected; `dev.py test --python 3.10` used to pick it and fail.
    version = "{}.{}".format(*sys.version_info[:2])
    shims = tmp_path / "shims"
    shims.mkdir()
    shim = shims / f"python{version}"
    shim.write_text(f"#!/bin/sh\necho 'pyenv: python{version}: command not found' >&2\nexit 127\n")
    shim.chmod(0o755)
    installed = tmp_path / "pyenv" / "versions" / f"{version}.0" / "bin"
    installed.mkdir(parents=True)
    (installed / "python").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", str(shims))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    dev = dev_script()
    assert dev.find_python(version) == installed / "python"
    (installed / "python").unlink()
    assert dev.find_python(version) is None  # the shim alone is no Python


def test_ci_without_the_supported_pythons_says_what_to_install_and_fails(tmp_path):
    (tmp_path / "empty").mkdir()
    environment = {**os.environ, "PATH": str(tmp_path / "empty"), "PYENV_ROOT": str(tmp_path / "no-pyenv")}
    result = subprocess.run([sys.executable, str(ROOT / "dev.py"), "ci"], cwd=tmp_path, env=environment,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 3
    for version in ("3.10", "3.13"):
        assert (f"Python {version} not found: install it with `pyenv install {version}` "
                f"or put python{version} on PATH") in result.stderr
    assert "nothing was tested" in result.stderr
