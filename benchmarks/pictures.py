"""How long pypads.to_mlflow.evaluation takes, and how large its pictures are, on scikit-learn's
bundled datasets and on larger made-up data:

    .venv/bin/python benchmarks/pictures.py

Prints one line per picture (the median of five draws, after a first one that pays for
matplotlib's import and font cache) and per scores() call. A printout, not a test:
nothing here asserts a budget.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, make_blobs, make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from pypads.to_mlflow.evaluation import Evaluation, importances, pictures, scores
from pypads.to_mlflow.evaluation.pictures import Drawn  # the module: the package's `pictures` is the function

REPEATS = 5
draw_times: dict[str, list[float]] = {}
cpu_times: dict[str, list[float]] = {}  # the machine may be busy: the CPU time tells the picture's own cost


def timed_draw(original: Callable[..., None]) -> Callable[..., None]:
    """Drawn.draw, noting how long each picture took (this benchmark only)."""
    def draw(self: Any, kind: str, *args: Any, **kwargs: Any) -> None:
        started, cpu = time.perf_counter(), time.process_time()
        original(self, kind, *args, **kwargs)
        draw_times.setdefault(f"{self.prefix}_{kind}.png", []).append(time.perf_counter() - started)
        cpu_times.setdefault(f"{self.prefix}_{kind}.png", []).append(time.process_time() - cpu)
    return draw


def median_ms(seconds: list[float]) -> float:
    return statistics.median(seconds) * 1000


def cases() -> list[tuple[str, Evaluation]]:
    X, y = load_iris(return_X_y=True)
    iris = LogisticRegression(max_iter=1000).fit(X, y)
    found = [("iris", Evaluation("classifier", y, iris.predict(X), iris.predict_proba(X), iris.classes_))]
    X, y = load_breast_cancer(return_X_y=True)
    cancer = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
    found.append(("cancer", Evaluation("classifier", y, cancer.predict(X), cancer.predict_proba(X), cancer.classes_)))
    X, y = make_classification(100_000, n_classes=10, n_informative=8, random_state=0)
    big = LogisticRegression(max_iter=200).fit(X, y)
    found.append(("classes10_rows100k", Evaluation("classifier", y, big.predict(X), big.predict_proba(X), big.classes_)))
    y = np.arange(20_000) % 50
    found.append(("classes50", Evaluation("classifier", y, np.roll(y, 7))))
    y = np.arange(20_000) % 10_000
    found.append(("classes10000", Evaluation("classifier", y, np.roll(y, 1))))
    X, y = load_diabetes(return_X_y=True)
    diabetes = LinearRegression().fit(X, y)
    found.append(("diabetes", Evaluation("regressor", y, diabetes.predict(X))))
    rng = np.random.default_rng(0)
    y = rng.normal(size=1_000_000)
    found.append(("regressor_rows1M", Evaluation("regressor", y, y + rng.normal(scale=0.3, size=len(y)))))
    X, _ = make_blobs(50_000, centers=5, random_state=0)
    kmeans = KMeans(5, n_init=1, random_state=0).fit(X)
    found.append(("kmeans_rows50k", Evaluation("clusterer", None, kmeans.labels_, features=X, inertia=kmeans.inertia_)))
    return found


def main() -> None:
    Drawn.draw = timed_draw(Drawn.draw)  # type: ignore[method-assign]
    for name, evaluation in cases():
        score_times = []
        for _ in range(REPEATS + 1):
            started = time.perf_counter()
            values, warnings = scores(evaluation)
            score_times.append(time.perf_counter() - started)
            files, picture_warnings = pictures(evaluation, name)
        for warning in warnings + picture_warnings:
            print(f"  warning: {warning}")
        print(f"{name:<22} scores() {median_ms(score_times[1:]):7.1f} ms  ({len(values)} metrics)")
        for file, content in files.items():
            print(f"  {file:<46} {median_ms(draw_times[file][1:]):7.1f} ms ({median_ms(cpu_times[file][1:]):6.1f} ms CPU)"
                  f"  {len(content) / 1000:6.1f} kB")
    X, y = load_iris(return_X_y=True, as_frame=True)
    forest = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        files, _ = importances(forest, None)
        times.append(time.perf_counter() - started)
    print(f"{'importances (forest)':<22} {median_ms(times):7.1f} ms  "
          + ", ".join(f"{file} {len(content) / 1000:.1f} kB" for file, content in files.items()))


if __name__ == "__main__":
    main()
