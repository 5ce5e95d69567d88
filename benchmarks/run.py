"""pypads benchmarks: each row measured side by side with its anchor, in one run.

    .venv/bin/python benchmarks/run.py            # the full run (a few minutes)
    .venv/bin/python benchmarks/run.py --quick    # a smoke run (seconds), used by the tests

Prints a table of medians and ratios. Timings are medians of alternating repetitions
(contender, anchor, contender, …) so that a noisy machine affects both alike. This is a
benchmark, not a test: nothing here asserts a budget.
"""

from __future__ import annotations

import argparse
import functools
import gc
import itertools
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import libraries  # benchmarks/libraries.py, beside this file
import team_server  # benchmarks/team_server.py

from pypads.core.calls import CallSite, Session
from pypads.core.patching.functions import FunctionPatches

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

ROWS: list[tuple[str, str, str, str]] = []


def row(name: str, measured: str, anchor: str, ratio: str) -> None:
    ROWS.append((name, measured, anchor, ratio))
    print(f"  {name}: {measured} | {anchor} | {ratio}", flush=True)


def alternate(contender: Callable[[], float], anchor: Callable[[], float], repeats: int) -> tuple[float, float]:
    """Medians of ``repeats`` alternating measurements (each returns seconds)."""
    mine, theirs = [], []
    for _ in range(repeats):
        mine.append(contender())
        theirs.append(anchor())
    return statistics.median(mine), statistics.median(theirs)


def per_call(function: Callable[[], Any], calls: int) -> Callable[[], float]:
    def measure() -> float:
        gc.disable()
        started = time.perf_counter()
        for _ in range(calls):
            function()
        elapsed = time.perf_counter() - started
        gc.enable()
        return elapsed / calls
    return measure


def inactive_hooks(store: str, quick: bool) -> None:
    def bare(x: int) -> int:
        return x

    @functools.wraps(bare)
    def passthrough(*args: Any, **kwargs: Any) -> Any:
        return bare(*args, **kwargs)

    # A function patched the way pypads patches sklearn's metrics, called outside any run
    # (the session has no run): the trampoline's pass-through on a trivial body.
    patches = FunctionPatches()

    def trivial(x: int) -> int:
        return x

    patches.track(trivial, lambda: CallSite(Session(), "trivial", frozenset({"pypads_metric"}), (), "none"))
    calls = 20_000 if quick else 500_000
    repeats = 3 if quick else 9
    hooked, plain = alternate(per_call(lambda: trivial(1), calls), per_call(lambda: bare(1), calls), repeats)
    wrapped, _ = alternate(per_call(lambda: passthrough(1), calls), per_call(lambda: bare(1), calls), repeats)
    patches.restore()
    row("inactive hook (per call)", f"{hooked * 1e9:.0f} ns",
        f"bare {plain * 1e9:.0f} ns, functools.wraps {wrapped * 1e9:.0f} ns",
        f"+{(hooked - plain) * 1e9:.0f} ns over bare (budget 1000 ns); {hooked / wrapped:.2f}x wraps (budget 3x)")


# Per-call rows run as scripts of their own, the way users run pypads: in a script that
# does not import MLflow, the uploader is a process of its own (this benchmark's process
# has MLflow imported, where PyPads() would upload on a thread).
SETTLED = textwrap.dedent("""
    def settled(tracker):
        # The run open and the run loggers done: per-call rows measure calls, not start-up.
        import threading
        tracker.run_id
        for thread in threading.enumerate():
            if thread.name in {"pypads-run-loggers", "pypads-recovery"}:
                thread.join()
""")


def tracked_fit(store: str, quick: bool) -> None:
    import mlflow
    from sklearn import datasets
    from sklearn.tree import DecisionTreeClassifier

    fits = 10 if quick else 100
    script = SETTLED + textwrap.dedent(f"""
        import statistics, time
        from sklearn import datasets
        from sklearn.tree import DecisionTreeClassifier
        from pypads import PyPads
        X, y = datasets.load_iris(return_X_y=True)
        def timed():
            started = time.perf_counter()
            DecisionTreeClassifier(random_state=0).fit(X, y)
            return time.perf_counter() - started
        for _ in range(5):
            timed()  # scikit-learn's first fits warm its caches
        tracker = PyPads(uri={store!r}, name="bench-fit")
        settled(tracker)
        run = tracker.session.run
        def untracked():
            # The anchor is the same patched fit outside a run (the inactive-hook path),
            # each next to a tracked one: this host's speed drifts by a third within
            # seconds, which moved an anchor measured before PyPads() by a millisecond.
            tracker.session.run = None
            try:
                return timed()
            finally:
                tracker.session.run = run
        tracked_times, untracked_times = [], []
        for index in range({fits}):
            if index % 2:
                tracked_time = timed()
                untracked_times.append(untracked())
            else:
                untracked_times.append(untracked())
                tracked_time = timed()
            tracked_times.append(tracked_time)
        tracker.end_run()
        differences = [mine - theirs for mine, theirs in zip(tracked_times, untracked_times)]
        print(statistics.median(tracked_times), statistics.median(untracked_times), statistics.median(differences))
    """)
    per_fit, untracked, difference = map(float, script_output(script)[0].split())
    row("tracked fit, calling thread", f"{per_fit * 1e3:.2f} ms", f"untracked {untracked * 1e3:.2f} ms",
        f"+{difference * 1e3:.2f} ms (budget 1 ms; median of {fits} pairs)")

    # The fits back to back, then the end: untracked fits between them would give the
    # uploader time to catch up that a script's loop does not give it.
    script = SETTLED + textwrap.dedent(f"""
        import time
        from sklearn import datasets
        from sklearn.tree import DecisionTreeClassifier
        from pypads import PyPads
        X, y = datasets.load_iris(return_X_y=True)
        tracker = PyPads(uri={store!r}, name="bench-fits")
        settled(tracker)
        started = time.perf_counter()
        for _ in range({fits}):
            DecisionTreeClassifier(random_state=0).fit(X, y)
        tracker.end_run()
        print(time.perf_counter() - started)
    """)
    pypads_total = float(script_output(script)[0])

    X, y = datasets.load_iris(return_X_y=True)
    autolog_fits = 2 if quick else fits  # all of them, as pypads' row: autolog's cost grows with its runs
    mlflow.set_tracking_uri(store)
    mlflow.set_experiment("bench-autolog")
    mlflow.sklearn.autolog(log_models=False, silent=True)
    started = time.perf_counter()
    for _ in range(autolog_fits):
        DecisionTreeClassifier(random_state=0).fit(X, y)
    autolog_per_fit = (time.perf_counter() - started) / autolog_fits
    mlflow.sklearn.autolog(disable=True)
    mlflow.set_tracking_uri(None)  # type: ignore[arg-type]
    measured = "all of them" if autolog_fits == fits else f"from {autolog_fits} fits"
    row(f"{fits} fits incl. flush", f"pypads {pypads_total:.2f} s", f"autolog(log_models=False) {autolog_per_fit * fits:.2f} s "
        f"({measured})", f"{autolog_per_fit * fits / pypads_total:.1f}x faster (budget 20x)")


def hot_metrics(store: str, quick: bool) -> None:
    from mlflow.tracking import MlflowClient

    rounds, block = (10, 50) if quick else (200, 50)
    calls = rounds * block
    script = SETTLED + textwrap.dedent(f"""
        import gc, statistics, time
        import numpy as np
        from sklearn.metrics import accuracy_score
        from pypads import PyPads
        y = np.random.RandomState(0).randint(0, 3, 150)
        def per_call():
            gc.disable()
            started = time.perf_counter()
            for _ in range({block}):
                accuracy_score(y, y)
            elapsed = time.perf_counter() - started
            gc.enable()
            return elapsed / {block}
        tracker = PyPads(uri={store!r}, name="bench-metrics", init_run_fns=[])
        settled(tracker)
        run = tracker.session.run
        def untracked_block():
            # The anchor is the same patched function outside a run: the inactive-hook path.
            tracker.session.run = None
            try:
                return per_call()
            finally:
                tracker.session.run = run
        # Many short pairs of blocks, in alternating order, and the median of the pairs'
        # differences: this host's speed drifts by a third within seconds, which moved a
        # difference of medians over few long blocks by ±50 µs with no tracking at all.
        tracked, untracked, differences = [], [], []
        for index in range({rounds}):
            if index % 2:
                tracked_time = per_call()
                untracked_time = untracked_block()
            else:
                untracked_time = untracked_block()
                tracked_time = per_call()
            tracked.append(tracked_time)
            untracked.append(untracked_time)
            differences.append(tracked_time - untracked_time)
        run_id = tracker.run_id
        tracker.end_run()
        print(statistics.median(tracked), statistics.median(untracked), statistics.median(differences), run_id)
    """)
    output = script_output(script)[0].split()
    tracked, untracked, difference, run_id = float(output[0]), float(output[1]), float(output[2]), output[3]
    stored = len(MlflowClient(store).get_metric_history(run_id, "accuracy_score_y"))
    row(f"{calls} accuracy_score calls", f"{tracked * 1e6:.1f} µs each", f"untracked {untracked * 1e6:.1f} µs",
        f"+{difference * 1e6:.1f} µs (budget 25 µs; median of {rounds} paired blocks); {stored}/{calls} values in MLflow")


def start_up(store: str, quick: bool) -> None:
    def script(code: str) -> float:
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        return float(result.stdout.strip().splitlines()[-1])

    pypads = textwrap.dedent(f"""
        import time
        started = time.perf_counter()
        from pypads import PyPads
        PyPads(uri={store!r}, name="bench-start")
        print(time.perf_counter() - started)
    """)
    mlflow = "import time\nstarted = time.perf_counter()\nimport mlflow\nprint(time.perf_counter() - started)"
    mine, anchor = alternate(lambda: script(pypads), lambda: script(mlflow), 1 if quick else 5)
    row("start-up (import + PyPads())", f"{mine:.2f} s", f"import mlflow {anchor:.2f} s", f"{mine:.2f} s blocking (budget 0.3 s)")


def call_recording(quick: bool) -> None:
    import numpy as np

    from pypads.recording.callmonitor import CONTEXT, intercept, load

    size = 10 if quick else 100
    array = np.random.RandomState(0).rand(size * 1024 * 1024 // 8)

    @intercept
    def consume(data: Any) -> int:
        return len(data)

    def synced(path: Path) -> None:
        with open(path, "rb") as stream:
            os.fsync(stream.fileno())

    with tempfile.TemporaryDirectory() as folder:
        previous = os.getcwd()
        os.chdir(folder)
        saved = itertools.count()

        def record(to_disk: bool) -> float:
            CONTEXT.new()  # a new database each time: the array is new to it
            consume(np.zeros(1))  # which exists before the clock starts, as after a program's first call
            assert CONTEXT.folder is not None
            before = set((CONTEXT.folder / "objects").iterdir())
            os.sync()  # each contender starts with nothing left to write back from the other
            started = time.perf_counter()
            consume(array)
            if to_disk:
                (stored,) = set((CONTEXT.folder / "objects").iterdir()) - before
                synced(stored)
            return time.perf_counter() - started

        def plain(to_disk: bool) -> float:
            path = Path(folder) / f"plain-{next(saved)}.npy"
            os.sync()
            started = time.perf_counter()
            np.save(path, array)
            if to_disk:
                synced(path)
            return time.perf_counter() - started

        try:
            repeats = 1 if quick else 5
            cached, cached_anchor = alternate(lambda: record(False), lambda: plain(False), repeats)
            on_disk, on_disk_anchor = alternate(lambda: record(True), lambda: plain(True), repeats)
            for _ in range(9):
                consume(array)
            assert CONTEXT.folder is not None
            objects = len(list((CONTEXT.folder / "objects").iterdir()))
            assert load(CONTEXT.folder).calls("consume") == 11
        finally:
            os.chdir(previous)
            CONTEXT.new()
    row(f"record a {size} MB array", f"{size / on_disk:.0f} MB/s with fsync, {size / cached:.0f} MB/s without",
        f"np.save {size / on_disk_anchor:.0f} MB/s, {size / cached_anchor:.0f} MB/s",
        f"{on_disk_anchor / on_disk:.2f}x np.save speed with fsync (on disk), {cached_anchor / cached:.2f}x without "
        f"(in the page cache, as far as the kernel keeps up); 10 calls stored {objects - 1} object(s)")


def script_output(code: str, env: dict[str, str] | None = None) -> tuple[str, float]:
    """Run ``code`` in a fresh interpreter; its stdout and the seconds from its last
    printed line to its exit (what the script waited for at exit)."""
    environment = {**os.environ, **(env or {})}
    environment.pop("MLFLOW_TRACKING_URI", None)
    with tempfile.TemporaryFile("w+") as errors:
        process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=errors,
                                   text=True, env=environment)
        assert process.stdout is not None
        lines = []
        last_line_at = time.perf_counter()
        for line in process.stdout:
            lines.append(line)
            last_line_at = time.perf_counter()
        if process.wait() != 0:
            errors.seek(0)
            raise RuntimeError(f"a benchmark script failed:\n{code}\n{errors.read()}")
    return "".join(lines), time.perf_counter() - last_line_at


def memory(store: str, quick: bool) -> None:
    size_mb = 50 if quick else 500
    template = textwrap.dedent(f"""
        import gc, weakref
        {{before}}
        import numpy as np
        from sklearn.linear_model import Ridge
        X = np.random.RandomState(0).rand({size_mb} * 1024 * 1024 // 8 // 50, 50)
        y = X[:, 0] * 2.0
        def status(key, pid="self"):
            return int(next(line for line in open(f"/proc/{{{{pid}}}}/status") if line.startswith(key)).split()[1]) / 1024
        before_fit = status("VmRSS:")
        Ridge(alpha=1.0, solver="cholesky").fit(X, y)
        data = weakref.ref(X)
        del X
        gc.collect()
        {{after}}
        # VmHWM, not ru_maxrss: ru_maxrss keeps the parent's size from before exec.
        print(status("VmHWM:"), status("VmHWM:") - before_fit, data() is None, uploader)
    """)
    tracked = template.format(before=f"from pypads import PyPads\ntracker = PyPads(uri={store!r}, name='bench-memory')",
                              after="tracker.run_id  # the uploader has MLflow imported\n"
                                    # its own process, or a spare one that waited for this run
                                    "uploader = status('VmHWM:', tracker.writer.uploader_pid)")
    with_mlflow = template.format(before="import mlflow", after="uploader = 0")
    untracked = template.format(before="", after="uploader = 0")
    peaks: dict[str, float] = {}
    growth: dict[str, float] = {}
    uploaders: dict[str, float] = {}
    released = True
    for name, code in (("untracked", untracked), ("tracked", tracked), ("mlflow", with_mlflow)):
        output, _ = script_output(code)
        peak, grown, freed, uploader = output.split()
        peaks[name], growth[name], uploaders[name] = float(peak), float(grown), float(uploader)
        released = released and freed == "True"
    row(f"peak RSS, fit on a {size_mb} MB array", f"{peaks['tracked']:.0f} MB",
        f"untracked {peaks['untracked']:.0f} MB; untracked + import mlflow {peaks['mlflow']:.0f} MB",
        f"+{peaks['tracked'] - peaks['untracked']:.0f} MB (budget 50 MB); the uploader, a process of its own with "
        f"MLflow in it, peaks at {uploaders['tracked']:.0f} MB whatever the data; the fit itself grew the peak by "
        f"{growth['tracked']:.0f} MB tracked, {growth['untracked']:.0f} MB untracked; user data released after the "
        f"call: {released}")


# Each builds X and y (about `size` MB of X) from a seeded generator, the same tracked and untracked.
LARGE_INPUTS = {
    "C array": ("rng.rand({size} * 2**20 // 8 // 50, 50)", "Ridge(solver='cholesky')"),
    "Fortran array": ("rng.rand(50, {size} * 2**20 // 8 // 50).T", "Ridge(solver='cholesky')"),
    "mixed DataFrame": (
        "pd.DataFrame({{**{{f'x{{i}}': rng.rand({size} * 2**20 // 100) for i in range(10)}}, "
        "'name': pd.Series([f'customer-{{i % 5000:05d}}' for i in range({size} * 2**20 // 100)])}})",
        "make_pipeline(make_column_transformer((OneHotEncoder(handle_unknown='ignore'), ['name']), "
        "remainder='passthrough'), Ridge(solver='sparse_cg'))"),
    "sparse matrix": ("sparse.csr_matrix((rng.rand(n := {size} * 2**20 // 12), rng.randint(0, 10_000, n)"
                      ".astype(np.int32), np.arange(0, n + 1, 64)), shape=(n // 64, 10_000))",
                      "Ridge(solver='sparse_cg', max_iter=20)"),
    # A list of 500 MB takes a minute to build and 2 GB to convert: 200 MB shows the same.
    "nested list": ("rng.rand({size} * 2**20 // 32 // 50, 50).tolist()", "Ridge(solver='cholesky')"),
}


def large_inputs(store: str, quick: bool) -> None:
    """Peak memory and fit time of one fit on a large input of each kind, tracked (Input
    digests it) against untracked, each in a fresh interpreter."""
    settled = SETTLED.replace("{", "{{").replace("}", "}}")  # literal braces in a format template
    template = settled + textwrap.dedent("""
        import time
        {before}
        import numpy as np
        import pandas as pd
        from scipy import sparse
        from sklearn.compose import make_column_transformer
        from sklearn.linear_model import Ridge
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import OneHotEncoder
        rng = np.random.RandomState(0)
        X = {build}
        y = rng.rand(X.shape[0] if hasattr(X, "shape") else len(X))
        {settle}
        def timed_fit():
            started, cpu_started = time.perf_counter(), time.thread_time()
            {model}.fit(X, y)
            return time.perf_counter() - started, time.thread_time() - cpu_started
        elapsed, cpu = timed_fit()
        print(int(next(line for line in open("/proc/self/status") if line.startswith("VmHWM:")).split()[1]) / 1024,
              elapsed, cpu)
        {steady}
        {after}
    """)
    # After the first fit, the tracked script times fits in pairs: one run untracked inside
    # pypads' own marker (the patched method then calls the original at once), one tracked.
    # Same process, same data, same memory: what differs is pypads' work alone. The first
    # fit in a fresh interpreter is dominated by the kernel handing out fresh pages (its
    # time swings by 2x from one process to the next, here 3-6 s against 0.4 s for the
    # next fits), which hides a 10 % budget in noise.
    steady = textwrap.dedent("""
        from pypads.core.calls import pypads_at_work
        pairs = []
        for _ in range({pairs}):
            with pypads_at_work():
                untracked = timed_fit()
            pairs.append(untracked + timed_fit())
        print(*(figure for pair in pairs for figure in pair))
    """)
    for kind, (build, model) in LARGE_INPUTS.items():
        size = (10 if quick else 200) if kind == "nested list" else (20 if quick else 500)
        results: dict[str, list[tuple[float, float, float]]] = {"untracked": [], "tracked": []}
        pairs: list[list[float]] = []  # untracked wall, untracked CPU, tracked wall, tracked CPU
        for _ in range(1 if quick else 3):  # alternating: a busy host slows both alike
            for mode in results:
                tracking = f"from pypads import PyPads\ntracker = PyPads(uri={store!r}, name='bench-inputs')"
                tracked = mode == "tracked"  # the uploader's start-up (MLflow's import) done before the clock starts
                code = template.format(before=tracking if tracked else "", after="tracker.end_run()" if tracked else "",
                                       settle="settled(tracker)" if tracked else "",
                                       steady=steady.format(pairs=1 if quick else 3) if tracked else "",
                                       build=build.format(size=size), model=model)
                first, *rest = script_output(code)[0].splitlines()
                peak, elapsed, cpu = map(float, first.split())
                results[mode].append((peak, elapsed, cpu))
                if rest:
                    figures = list(map(float, rest[0].split()))
                    pairs.extend(figures[i:i + 4] for i in range(0, len(figures), 4))
        medians = {mode: tuple(statistics.median(figures) for figures in zip(*runs)) for mode, runs in results.items()}
        (peak, elapsed, cpu), (anchor_peak, anchor_elapsed, anchor_cpu) = medians["tracked"], medians["untracked"]
        wall_ratio = statistics.median(pair[2] / pair[0] for pair in pairs)
        cpu_ratio = statistics.median(pair[3] / pair[1] for pair in pairs)
        # The calling thread's CPU time as well as the wall clock: the wall clock of a fit
        # swings by 2x on a shared host, the thread's own CPU time far less.
        row(f"fit on a {size} MB {kind}", f"peak {peak:.0f} MB, first fit {elapsed:.2f} s ({cpu:.2f} s CPU)",
            f"untracked {anchor_peak:.0f} MB, {anchor_elapsed:.2f} s ({anchor_cpu:.2f} s CPU)",
            f"{peak - anchor_peak:+.0f} MB (budget 50 MB); fit time {wall_ratio:.2f}x, CPU time of the calling thread "
            f"{cpu_ratio:.2f}x (budget 1.10x; median of {len(pairs)} pairs of later fits in one process); first fit in "
            f"a fresh interpreter {elapsed / anchor_elapsed:.2f}x, {cpu / anchor_cpu:.2f}x")


def exit_wait(store: str, quick: bool) -> None:
    metrics = 200 if quick else 2000
    script = textwrap.dedent(f"""
        import atexit, time
        exit_started = []
        # atexit runs its functions last registered first: this one runs after pypads'
        # (which flushes and ends the run) and notes how long that took.
        atexit.register(lambda: exit_started and open({{times!r}}, "a").write(
            f"{{{{time.perf_counter() - exit_started[0]}}}}\\n"))
        from pypads import PyPads
        tracker = PyPads(uri={{uri!r}}, name="bench-exit", init_run_fns=[], config={{{{"flush_timeout": 5}}}})
        atexit.register(lambda: exit_started.append(time.perf_counter()))  # runs before pypads'
        for step in range({metrics}):
            tracker.writer.log_metric("loss", 1.0 / (step + 1), step=step)
        {{end}}
        print(0, flush=True)
    """)
    # A script that leaves its data to the exit, against the same script that flushes it
    # before its last line. The time from the last line to the process' end is what the
    # exit waited; the flush at exit is timed inside the exiting process, so the two come
    # from the same run (the uploader's start varies by a second between runs); what is
    # left is the interpreter's own teardown, which the flushed script has too.
    with tempfile.TemporaryDirectory() as folder:
        times = str(Path(folder) / "exit-times")
        pending = script.format(uri=store, end="", times=times)
        flushed = script.format(uri=store, end="tracker.end_run()", times=str(Path(folder) / "unused"))
        waits, teardowns = [], []
        for _ in range(1 if quick else 5):
            waits.append(script_output(pending)[1])
            teardowns.append(script_output(flushed)[1])
        flushes = [float(line) for line in Path(times).read_text().split()]
        with socket.socket() as probe:  # a port where nothing listens: a dead tracking server
            probe.bind(("127.0.0.1", 0))
            dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
        dead_waited = script_output(script.format(uri=dead, end="", times=times))[1] - statistics.median(teardowns)
    beyond = statistics.median(wait - flush for wait, flush in zip(waits, flushes)) - statistics.median(teardowns)
    row(f"exit with {metrics} metrics pending", f"waited {statistics.median(waits):.2f} s",
        f"the flush at exit {statistics.median(flushes):.2f} s; teardown of a flushed script "
        f"{statistics.median(teardowns):.2f} s", f"{beyond:+.2f} s beyond flush and teardown; dead server: waited "
        f"{dead_waited:.2f} s (bound 10 s: the uploader's start-up, then the "
        "call nobody answers, each at most flush_timeout 5 s), data left in the journal")


SECTIONS: dict[str, Callable[[str, bool], None]] = {
    "inactive_hooks": inactive_hooks, "tracked_fit": tracked_fit, "hot_metrics": hot_metrics,
    "start_up": start_up, "call_recording": lambda store, quick: call_recording(quick), "memory": memory,
    "large_inputs": large_inputs, "exit_wait": exit_wait,
    "libraries": lambda store, quick: [row(*measured) for measured in libraries.measure(store, quick)],
    "team_server": lambda store, quick: [row(*measured) for measured in team_server.measure(quick)],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a smoke run with tiny sizes")
    parser.add_argument("--only", nargs="+", choices=sorted(SECTIONS), help="run only these rows")
    options = parser.parse_args()
    # Compiled as installing pypads compiles it: with PYTHONDONTWRITEBYTECODE set, as on
    # some hosts, each script here would otherwise compile pypads from source first.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(__file__).resolve().parents[1] / "pypads")],
                   check=True, stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory(prefix="pypads-bench-") as home:
        os.environ["PYPADS_HOME"] = home
        store = f"sqlite:///{Path(home) / 'bench.db'}"
        print("pypads benchmarks" + (" (quick)" if options.quick else ""), flush=True)
        for name, section in SECTIONS.items():
            if not options.only or name in options.only:
                section(store, options.quick)
    print("\n| row | pypads | anchor | ratio |\n|---|---|---|---|")
    for name, measured, anchor, ratio in ROWS:
        print(f"| {name} | {measured} | {anchor} | {ratio} |")


if __name__ == "__main__":
    main()
