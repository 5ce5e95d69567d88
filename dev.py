#!/usr/bin/env python3
"""Set up and run pypads from a fresh clone with nothing but Python 3.10+.

    python3 dev.py example                 # install, then track examples/iris.py into the default store
    python3 dev.py test                    # install, then run the whole test suite (the three tiers)
    python3 dev.py test --python 3.10      # the same on another Python (a version or a path)
    python3 dev.py unit                    # the unit tier: in this process, no MLflow, no subprocess (seconds)
    python3 dev.py stage                   # the stage tier: one stage against its real neighbours (a minute or two)
    python3 dev.py e2e                     # the end-to-end tier: real scripts, uploaders and stores (25-40 minutes)
    python3 dev.py lint                    # ruff and mypy, as pyproject.toml configures them
    python3 dev.py floors                  # redraw the floors' picture in docs/design.md from the code
    python3 dev.py ci                      # lint, then the suite on the oldest and the newest supported Python

Installing means: Poetry in ``.tools/`` (a private virtualenv), the project and its
locked dependencies in ``.venv/`` (for another Python: ``.venvs/``), and their byte-code
compiled once (this machine sets PYTHONDONTWRITEBYTECODE, and recompiling MLflow at
every start costs seconds). On Debian as root, installing also puts in what the tests
of a team's server and of MPI need from the system, when it is missing: PostgreSQL and
Open MPI (``apt-get install postgresql openmpi-bin``); elsewhere those tests say why they
are skipped. Arguments after the task (and ``--python``) go to pytest.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
# The test tiers, each a command of its own; `test` runs all three.
TIERS = {
    "unit": ["tests/unit"],  # in this process, without MLflow or another process
    "stage": ["tests/stage"],  # one stage (mappings, journal, loggers, reading runs) against its real neighbours
    "e2e": ["tests", "--ignore=tests/unit", "--ignore=tests/stage"],  # real scripts, uploaders and stores
}
TOOLS = ROOT / ".tools"
OTHER_VENVS = ROOT / ".venvs"
POETRY_VERSION = "2.5.1"


def run(*command: str | Path, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(map(str, command)), flush=True)
    subprocess.run([str(part) for part in command], cwd=ROOT, check=True, env=env)


def executable(env: Path, name: str) -> Path:
    return env / ("Scripts" if os.name == "nt" else "bin") / name


def find_python(wanted: str) -> Path | None:
    """An interpreter for ``wanted``: a path, or a version such as ``3.10`` found on PATH
    (``python3.10``) or among pyenv's versions.

    A candidate counts only if it runs and is that version: pyenv puts a ``python3.10``
    shim on PATH for every installed version, but the shim fails (exit 127) unless that
    version is selected by ``pyenv global``/``local``, so finding the name is not enough.
    """
    if os.sep in wanted:
        return Path(wanted) if Path(wanted).exists() else None
    candidates = []
    on_path = shutil.which(f"python{wanted}")
    if on_path:
        candidates.append(Path(on_path))
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    installed = glob.glob(str(pyenv_root / "versions" / f"{wanted}.*" / "bin" / "python"))
    candidates.extend(Path(found) for found in sorted(installed, key=_version_key, reverse=True))
    return next((candidate for candidate in candidates if _runs_as(candidate, wanted)), None)


def _version_key(path: str) -> tuple[int, ...]:
    """``.../versions/3.10.13/bin/python`` sorts after ``.../3.10.9/...``."""
    name = Path(path).parent.parent.name
    return tuple(int(part) if part.isdigit() else -1 for part in name.split("."))


def _runs_as(python: Path, wanted: str) -> bool:
    try:
        version = subprocess.run([str(python), "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                                 capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return False
    return version == wanted or version.startswith(wanted + ".")


def supported_range() -> tuple[str, str]:
    """The oldest and the newest Python that ``requires-python`` in pyproject.toml admits,
    e.g. ``(">=3.10,<3.14")`` gives ("3.10", "3.13"). Read with a pattern, not tomllib,
    which Python 3.10 lacks."""
    text = (ROOT / "pyproject.toml").read_text()
    declared = re.search(r'^requires-python\s*=\s*"([^"]+)"', text, re.MULTILINE)
    lower = declared and re.search(r">=\s*3\.(\d+)", declared.group(1))
    upper = declared and re.search(r"<\s*3\.(\d+)", declared.group(1))
    if not (lower and upper):
        raise SystemExit(f"dev.py: cannot read the supported range from requires-python in pyproject.toml "
                         f"(found {declared.group(1) if declared else 'nothing'!r}; expected '>=3.X,<3.Y')")
    return f"3.{lower.group(1)}", f"3.{int(upper.group(1)) - 1}"


# The marker of tests CI runs on the newest supported Python only: a team's server, MPI
# launches and the benchmarks' smoke run, some eleven minutes of servers and launchers
# starting, on code the rest of the suite runs on both (see .ci/run).
NEWEST_ONLY = "newest_only"


def ci(pytest_args: list[str]) -> int:
    """The suite on the oldest and the newest supported Python, one after the other
    (on the oldest without the tests marked ``newest_only``, unless the newest is missing).

    A version missing on the machine is said loudly and skipped, so that the other one
    still runs; it fails CI only when no version at all could run. Versions in between
    are not run: each run is a full suite (see .ci/run for the time budget)."""
    results: dict[str, str] = {}
    interpreters = {version: find_python(version) for version in supported_range()}  # one entry if oldest == newest
    # The newest found runs every test: with the newest missing, the oldest runs them.
    runs_all = max((version for version, found in interpreters.items() if found), default=None,
                   key=lambda version: int(version.split(".")[1]))
    for version, interpreter in interpreters.items():
        if interpreter is None:
            print(f"dev.py: Python {version} not found: install it with `pyenv install {version}` or put "
                  f"python{version} on PATH; running the suite on the other supported versions only",
                  file=sys.stderr, flush=True)
            results[version] = "missing"
            continue
        print(f"dev.py: the suite on Python {version} ({interpreter})", flush=True)
        python = install(interpreter)
        if "lint" not in results:  # once, in the first environment: the code is the same for all
            results["lint"] = "passed" if lint(python) == 0 else "failed"
        selection = [] if version == runs_all or "-m" in pytest_args else ["-m", f"not {NEWEST_ONLY}"]
        code = subprocess.run([str(python), "-m", "pytest", *selection, *pytest_args], cwd=ROOT).returncode
        results[version] = "passed" if code == 0 else f"failed (pytest exit code {code})"
    print("dev.py ci: " + "; ".join(f"{version if version == 'lint' else 'Python ' + version} {result}"
                                    for version, result in results.items()), flush=True)
    ran = [result for version, result in results.items() if result != "missing" and version != "lint"]
    if not ran:
        print("dev.py ci: no supported Python found, nothing was tested", file=sys.stderr)
        return 3
    return 0 if all(result in ("passed", "missing") for result in results.values()) else 1


def lint(python: Path) -> int:
    """ruff (lint) and mypy (types, for the oldest supported Python), as pyproject.toml
    configures them; non-zero if either finds something."""
    codes = [subprocess.run([str(python), "-m", tool, *arguments], cwd=ROOT).returncode
             for tool, arguments in (("ruff", ["check", "."]), ("mypy", []))]
    return max(codes)


def system_packages() -> None:
    """What some tests need from Debian's packages, where it is missing and this process
    may install it: PostgreSQL for a team's tracking server (tests/servers.py), and
    Open MPI for a real ``mpirun``."""
    missing = [package for package, present in (
        ("postgresql", glob.glob("/usr/lib/postgresql/*/bin/initdb") or shutil.which("initdb")),
        ("openmpi-bin", shutil.which("mpirun")),
    ) if not present]
    if not missing:
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        print(f"dev.py: {', '.join(missing)} missing and cannot be installed from here (Debian, as root: apt-get "
              f"install {' '.join(missing)}); the tests that need them will be skipped", file=sys.stderr, flush=True)
        return
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    run("apt-get", "update", "-qq", env=environment)
    run("apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing, env=environment)


def install(interpreter: Path | None = None) -> Path:
    """Install everything; returns the Python of the environment the project is in."""
    system_packages()
    poetry = executable(TOOLS, "poetry")
    if not poetry.exists():
        venv.create(TOOLS, with_pip=True)
        run(executable(TOOLS, "python"), "-m", "pip", "install", "--quiet", f"poetry=={POETRY_VERSION}")
    env = None
    if interpreter is not None:  # an environment of its own, beside the default .venv
        env = {**os.environ, "POETRY_VIRTUALENVS_IN_PROJECT": "false", "POETRY_VIRTUALENVS_PATH": str(OTHER_VENVS)}
        run(poetry, "env", "use", interpreter, env=env)
    run(poetry, "install", "--no-interaction", env=env)
    if interpreter is None:
        python = executable(ROOT / ".venv", "python")
    else:
        location = subprocess.run([str(poetry), "env", "info", "--path"], cwd=ROOT, env=env, check=True,
                                  capture_output=True, text=True).stdout.strip()
        python = executable(Path(location), "python")
    run(python, "-m", "compileall", "-q", "-j", "0", python.parent.parent, ROOT / "pypads")
    return python


def main(argv: list[str]) -> int:
    task = argv[1] if len(argv) > 1 else ""
    if task == "floors":  # no install: the picture is read from the source with the standard library
        from tools.layout import write_picture

        write_picture()
        return 0
    if task not in {"example", "test", "ci", "lint", *TIERS}:
        print(__doc__)
        return 2
    rest = argv[2:]
    if task == "ci":
        return ci(rest)
    interpreter = None
    if rest[:1] == ["--python"] and len(rest) > 1:
        interpreter = find_python(rest[1])
        if interpreter is None:
            print(f"dev.py: no Python {rest[1]} on this machine (looked on PATH and in pyenv's versions)",
                  file=sys.stderr)
            return 3
        rest = rest[2:]
    python = install(interpreter)
    if task == "lint":
        return lint(python)
    if rest[:1] == ["--fast"]:  # the name the unit tier had before there were three
        task, rest = "unit", rest[1:]
    if task in TIERS:
        rest = [*TIERS[task], *rest]
    if task == "example":
        return subprocess.run([str(python), str(ROOT / "examples" / "iris.py")], cwd=ROOT).returncode
    return subprocess.run([str(python), "-m", "pytest", *rest], cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
