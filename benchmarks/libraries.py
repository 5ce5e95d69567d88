"""The libraries beside scikit-learn: a native ``train`` of 100 rounds, tracked by pypads'
mapping file against the same call untracked, and MLflow's own autolog for that library
against the same call without it; each pair timed side by side in one interpreter.

    .venv/bin/python benchmarks/run.py --only libraries

Part of ``run.py``'s table; a library that is not installed gives no row.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap

# Per library: the import, the data made ready for its train, and one train of 100 rounds
# on breast cancer with a training and a test set evaluated at every round.
TRAINS = {
    "xgboost": textwrap.dedent("""
        import xgboost as lib
        data = lib.DMatrix(X_train, label=y_train)
        evals = [(data, "train"), (lib.DMatrix(X_test, label=y_test), "test")]
        def train():
            lib.train({"max_depth": 3, "objective": "binary:logistic", "nthread": 1}, data, 100, evals=evals,
                      verbose_eval=False)
    """),
    "lightgbm": textwrap.dedent("""
        import lightgbm as lib
        data = lib.Dataset(X_train, y_train, free_raw_data=False)
        valid = lib.Dataset(X_test, y_test, reference=data)
        def train():
            lib.train({"objective": "binary", "num_leaves": 7, "verbose": -1, "num_threads": 1}, data, 100,
                      valid_sets=[data, valid], valid_names=["train", "test"])
    """),
}

DATA = textwrap.dedent("""
    import statistics, time
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    def timed():
        started = time.perf_counter()
        train()
        return time.perf_counter() - started
    def pairs(first, second, count):
        # Alternating, so that this host's drifting speed affects both alike.
        differences, seconds = [], []
        for index in range(count):
            if index % 2:
                a = first(); b = second()
            else:
                b = second(); a = first()
            differences.append(a - b); seconds.append(b)
        return statistics.median(seconds), statistics.median(differences)
""")

PYPADS = textwrap.dedent("""
    from pypads import PyPads
    {train}
    for _ in range(2):
        train()  # the library's first calls warm its caches
    tracker = PyPads(uri={store!r}, name="bench-{library}")
    tracker.run_id
    run = tracker.session.run
    def untracked():
        tracker.session.run = None  # the same patched call outside a run
        try:
            return timed()
        finally:
            tracker.session.run = run
    anchor, difference = pairs(timed, untracked, {count})
    tracker.end_run()
    print(anchor, difference)
""")

AUTOLOG = textwrap.dedent("""
    import mlflow
    {train}
    mlflow.set_tracking_uri({store!r})
    mlflow.set_experiment("bench-autolog-{library}")
    flavour = getattr(mlflow, "{library}")
    for _ in range(2):
        train()
    def with_autolog():
        flavour.autolog(silent=True)
        try:
            return timed()
        finally:
            flavour.autolog(disable=True)
    anchor, difference = pairs(with_autolog, timed, {count})
    print(anchor, difference)
""")


def measure(store: str, quick: bool) -> list[tuple[str, str, str, str]]:
    """A row per installed library: (name, pypads, anchor, ratio)."""
    rows = []
    count = 2 if quick else 10
    for library, train in TRAINS.items():
        if importlib.util.find_spec(library) is None:
            continue
        values = {"train": train, "store": store, "library": library, "count": count}
        untracked, pypads = _run(DATA + PYPADS.format(**values))
        plain, autolog = _run(DATA + AUTOLOG.format(**values))
        rows.append((f"{library}.train, 100 rounds, calling thread", f"pypads +{pypads * 1e3:.1f} ms",
                     f"untracked {untracked * 1e3:.1f} ms; autolog +{autolog * 1e3:.1f} ms (on {plain * 1e3:.1f} ms)",
                     f"{autolog / pypads:.1f}x less than autolog; median of {count} pairs each"))
    return rows


def _run(code: str) -> tuple[float, float]:
    environment = {key: value for key, value in os.environ.items() if key != "MLFLOW_TRACKING_URI"}
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                            env=environment, timeout=900)
    if result.returncode != 0:
        raise RuntimeError(f"a benchmark script failed:\n{code}\n{result.stderr}")
    first, second = map(float, result.stdout.split()[-2:])
    return first, second
