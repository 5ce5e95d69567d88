"""A team's tracking server: ``mlflow server`` over PostgreSQL, artifacts proxied.

Rows of ``benchmarks/run.py --only team_server``: 100 fits into the server, tracked by
pypads and by ``mlflow.sklearn.autolog(log_models=False)``, each in a script of its own;
and the values per second of eight scripts logging at once, against one script alone.
The server and its database are started here, as the tests start them (tests/servers.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from servers import ServerUnavailable, mlflow_server, postgres_cluster  # noqa: E402

FITS = textwrap.dedent("""
    import sys, time
    tracker = None
    if sys.argv[1] == "pypads":
        from pypads import PyPads
        tracker = PyPads(name="bench-team-pypads")
    else:
        import mlflow
        mlflow.set_experiment("bench-team-autolog")
        mlflow.sklearn.autolog(log_models=False, silent=True)
    from sklearn import datasets
    from sklearn.tree import DecisionTreeClassifier
    X, y = datasets.load_iris(return_X_y=True)
    started = time.perf_counter()
    for _ in range(int(sys.argv[2])):
        DecisionTreeClassifier(random_state=0).fit(X, y)
    if tracker is not None:
        tracker.end_run()  # the flush: everything in the server
    print(time.perf_counter() - started)
""")

VALUES = textwrap.dedent("""
    import sys
    import numpy as np
    from pypads import PyPads
    tracker = PyPads(name="bench-team-values")
    from sklearn.metrics import accuracy_score
    truth = np.arange(1000) % 2
    for step in range(int(sys.argv[1])):
        predicted = truth.copy()
        predicted[:step] ^= 1
        accuracy_score(truth, predicted)
""")


def _run(code: str, arguments: list[str], environment: dict[str, str], count: int = 1) -> float:
    """Seconds from the start of ``count`` copies of a script at once to the last one's exit."""
    started = time.perf_counter()
    processes = [subprocess.Popen([sys.executable, "-c", code, *arguments], env=environment, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(count)]
    for process in processes:
        stdout, stderr = process.communicate()
        if process.returncode != 0:
            raise RuntimeError(f"a benchmark script failed:\n{stderr}")
    return time.perf_counter() - started


def _fits_time(kind: str, fits: int, environment: dict[str, str]) -> float:
    result = subprocess.run([sys.executable, "-c", FITS, kind, str(fits)], env=environment, capture_output=True,
                            text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"the {kind} fits failed:\n{result.stderr}")
    return float(result.stdout.split()[-1])


def measure(quick: bool) -> list[tuple[str, str, str, str]]:
    fits, values = (10, 100) if quick else (100, 1000)
    with tempfile.TemporaryDirectory(prefix="pypads-bench-team-") as folder:
        try:
            with postgres_cluster() as database, mlflow_server(database, Path(folder), workers=2) as server:
                environment = {**os.environ, "MLFLOW_TRACKING_URI": server.url, "PYPADS_HOME": f"{folder}/home",
                               "MLFLOW_DISABLE_TELEMETRY": "true"}
                _run(VALUES, ["10"], environment)  # a first run: the experiment, a spare uploader
                pypads_fits = _fits_time("pypads", fits, environment)
                autolog_fits = _fits_time("autolog", fits, environment)
                alone = _run(VALUES, [str(values)], environment)
                together = _run(VALUES, [str(values)], environment, count=8)
        except ServerUnavailable as unavailable:
            return [("team server (PostgreSQL)", "not measured", str(unavailable), "")]
    one_rate, eight_rate = values / alone, 8 * values / together
    return [
        (f"{fits} fits into a PostgreSQL-backed server", f"pypads {pypads_fits:.2f} s (incl. flush)",
         f"autolog(log_models=False) {autolog_fits:.2f} s", f"{autolog_fits / pypads_fits:.1f}x faster"),
        (f"8 scripts x {values} values at once, start to exit", f"{eight_rate:.0f} values/s ({together:.1f} s)",
         f"one script {one_rate:.0f} values/s ({alone:.1f} s)", f"{eight_rate / one_rate:.1f}x the throughput"),
    ]
