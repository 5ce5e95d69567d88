"""The built wheel carries the default mappings and works outside the repository."""

from __future__ import annotations

import site
import subprocess
import sys
import venv
from pathlib import Path

from conftest import script_environment

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_installed_in_a_fresh_venv_runs_the_example(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(ROOT)],
        check=True, capture_output=True,
    )
    wheel = next(dist.glob("pypads-*.whl"))

    fresh = tmp_path / "fresh"
    venv.create(fresh, with_pip=False)
    fresh_python = fresh / "bin" / "python"
    fresh_site = Path(subprocess.run([str(fresh_python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                     check=True, capture_output=True, text=True).stdout.strip())
    # The dependencies come from the test environment (no network needed); pypads only from the wheel.
    (fresh_site / "dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile", "--target", str(fresh_site), str(wheel)],
                   check=True, capture_output=True)

    work = tmp_path / "elsewhere"
    work.mkdir()
    example = work / "iris.py"
    example.write_text((ROOT / "examples" / "iris.py").read_text()
                       + "\nimport pypads, json\nprint('module', pypads.__file__)\nprint('mappings', [m.source for m in tracker.mappings])\n")
    environment = script_environment(tmp_path)
    environment.pop("PYTHONPATH", None)
    result = subprocess.run([str(fresh_python), str(example)], cwd=work, env=environment, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines() if line.startswith(("module", "mappings")))
    assert lines["module"].startswith(str(fresh_site))
    assert "default_mappings/sklearn_1.json" in lines["mappings"] and str(fresh_site) in lines["mappings"]
    assert "run id: " in result.stdout
    assert f"ui --backend-store-uri sqlite:///{tmp_path / 'home' / 'mlflow.db'}" in result.stdout
