#!/usr/bin/env python3
"""Set up and run pypads from a fresh clone with nothing but Python 3.10+.

    python3 dev.py example   # install, then track examples/iris.py into the default store
    python3 dev.py test      # install, then run the whole test suite

Installing means: Poetry in ``.tools/`` (a private virtualenv), the project and its
locked dependencies in ``.venv/``, and their byte-code compiled once (this machine
sets PYTHONDONTWRITEBYTECODE, and recompiling MLflow at every start costs seconds).
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
TOOLS = ROOT / ".tools"
POETRY_VERSION = "2.5.1"


def run(*command: str | Path) -> None:
    print("+", " ".join(map(str, command)), flush=True)
    subprocess.run([str(part) for part in command], cwd=ROOT, check=True)


def executable(env: Path, name: str) -> Path:
    return env / ("Scripts" if os.name == "nt" else "bin") / name


def install() -> Path:
    poetry = executable(TOOLS, "poetry")
    if not poetry.exists():
        venv.create(TOOLS, with_pip=True)
        run(executable(TOOLS, "python"), "-m", "pip", "install", "--quiet", f"poetry=={POETRY_VERSION}")
    run(poetry, "install", "--no-interaction")
    python = executable(ROOT / ".venv", "python")
    run(python, "-m", "compileall", "-q", "-j", "0", ROOT / ".venv", ROOT / "pypads")
    return python


def main(argv: list[str]) -> int:
    task = argv[1] if len(argv) > 1 else ""
    if task not in {"example", "test"}:
        print(__doc__)
        return 2
    python = install()
    if task == "example":
        return subprocess.run([str(python), str(ROOT / "examples" / "iris.py")], cwd=ROOT).returncode
    return subprocess.run([str(python), "-m", "pytest", *argv[2:]], cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
