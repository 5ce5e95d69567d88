"""A smoke run of the benchmark suite, so that it never rots (no timing is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.newest_only  # some four minutes: once per CI run
def test_benchmark_quick_run_prints_every_row():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    table = result.stdout.split("| row | pypads | anchor | ratio |", 1)[1]
    for name in ("inactive hook", "tracked fit, calling thread", "fits incl. flush", "accuracy_score calls",
                 "start-up", "record a", "into a PostgreSQL-backed server", "values at once"):
        assert name in table, name
    assert "500/500 values in MLflow" in table and "stored 1 object(s)" in table
