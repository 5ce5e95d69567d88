"""The call-recording database: the seed's examples, scale and safety, each process-level
case in a real subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from blake3 import blake3

from pypads.recording.callmonitor import CallMonitorError, Pickled, Unsaved, load


def run_python(code: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if key != "MLFLOW_TRACKING_URI"}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=timeout)


SEED = '''
import numpy as np
from os.path import join
from pypads.recording.callmonitor import intercept, load, REGISTRY, Handler

class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

class PointHandler(Handler):
    def load(self, path):
        with open(join(path, f"point_{self.target}.txt")) as f:
            self.data = Point(*map(float, f.read().split()))
    def save(self, path):
        with open(join(path, f"point_{self.target}.txt"), "w") as f:
            f.write(f"{self.data.x} {self.data.y}")
    @classmethod
    def accumulator_done(cls):
        pass

REGISTRY.add(Point, PointHandler)

@intercept
def test_fn_1(x, y=2, z=3):
    pass

@intercept
def test_fn_2(x, y=2, z=3):
    pass

@intercept
def test_np_1(x, n):
    pass

@intercept
def norm(p, *, scale=1.0):
    return (p.x ** 2 + p.y ** 2) ** 0.5 * scale

test_fn_1(1)
test_fn_1(1, 5, z=9)
test_fn_2(3)
test_np_1(10, np.zeros(10))
test_np_1(11, n=np.ones(3))
norm(Point(3, 4))
'''


def test_seed_examples_give_the_seeds_results_and_summaries(tmp_path):
    result = run_python(SEED + '''
db = load("call-monitor")
print(repr(REGISTRY).replace("__main__.", ""))
print(db)
print(db.get("test_np_1", 1))
args = db.get_args("test_fn_1", 1)
print(args)
print(args.x, args.y, args.z)
print(db.get_args("test_fn_1", 2).z)
p = db.get("norm", 1)[0][0]
print(type(p).__name__, p.x, p.y, db.get_args("norm", 1).scale)
''', tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == textwrap.dedent('''\
        {
            <class 'numpy.ndarray'> : <class 'pypads.recording.callmonitor.handlers.NPHandler'>,
            <class 'Point'> : <class 'PointHandler'>
        }
        {
            Locked : True
            norm : {
                calls : 1
                args : ['p', 'scale']
                defaults : {'scale': 1.0}
            }
            test_fn_1 : {
                calls : 2
                args : ['x', 'y', 'z']
                defaults : {'y': 2, 'z': 3}
            }
            test_fn_2 : {
                calls : 1
                args : ['x', 'y', 'z']
                defaults : {'y': 2, 'z': 3}
            }
            test_np_1 : {
                calls : 2
                args : ['x', 'n']
                defaults : None
            }
        }
        ([10, array([0., 0., 0., 0., 0., 0., 0., 0., 0., 0.])], {})
        dict_keys(['x', 'y', 'z'])
        1 2 3
        9
        Point 3.0 4.0 1.0
        ''')
    folder = tmp_path / "call-monitor"
    assert (folder / "__main__.test_np_1" / "1" / "arg_1.npy").is_file()
    assert (folder / "__main__.test_np_1" / "2" / "arg_n.npy").is_file()
    assert (folder / "__main__.norm" / "1" / "point_0.txt").read_text() == "3 4"


def test_never_overwrites_and_keeps_its_root_after_chdir(tmp_path):
    code = '''
import os
import shutil
from pypads.recording.callmonitor import intercept, CONTEXT
@intercept
def f(x):
    return x
f(1)
os.makedirs("elsewhere", exist_ok=True)
os.chdir("elsewhere")
f(2)
print(CONTEXT.folder)
'''
    first, second = run_python(code, tmp_path), run_python(code, tmp_path)
    assert first.stdout.strip() == str(tmp_path / "call-monitor")
    assert second.stdout.strip() == str(tmp_path / "call-monitor-1")
    assert load(tmp_path / "call-monitor").calls("f") == 2
    assert not (tmp_path / "elsewhere" / "call-monitor").exists()


def test_eight_threads_of_500_calls_give_4000_records(tmp_path):
    result = run_python('''
import threading
from pypads.recording.callmonitor import intercept
@intercept
def work(thread, i):
    return thread * 1000 + i
threads = [threading.Thread(target=lambda t=t: [work(t, i) for i in range(500)]) for t in range(8)]
[t.start() for t in threads]
[t.join() for t in threads]
''', tmp_path)
    assert result.returncode == 0, result.stderr
    db = load(tmp_path / "call-monitor")
    assert db.calls("work") == 4000
    seen = {tuple(db.get("work", n)[0]) for n in range(1, 4001)}
    assert seen == {(t, i) for t in range(8) for i in range(500)}
    assert {db.get_result("work", n) for n in range(1, 4001)} == {t * 1000 + i for t in range(8) for i in range(500)}


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_child_processes_write_their_own_databases(tmp_path, method):
    (tmp_path / "work.py").write_text(textwrap.dedent('''
        from pypads.recording.callmonitor import intercept
        @intercept
        def square(x):
            return x * x
        def child(start):
            for i in range(start, start + 5):
                square(i)
    '''))
    result = run_python(f'''
import multiprocessing, sys, os
sys.path.insert(0, os.getcwd())
from work import child, square
if __name__ == "__main__":
    square(100)
    context = multiprocessing.get_context("{method}")
    processes = [context.Process(target=child, args=(10 * k,)) for k in range(1, 3)]
    [p.start() for p in processes]
    [p.join() for p in processes]
    print(",".join(str(p.pid) for p in processes))
''', tmp_path)
    assert result.returncode == 0, result.stderr
    assert load(tmp_path / "call-monitor").calls("square") == 1
    for k, pid in enumerate(result.stdout.strip().split(","), start=1):
        db = load(tmp_path / f"call-monitor-tid={pid}")
        assert [db.get("square", n)[0][0] for n in range(1, 6)] == list(range(10 * k, 10 * k + 5))


@pytest.mark.skipif(shutil.which("mpirun") is None,
                    reason="no MPI runtime (Debian: apt-get install openmpi-bin; `python3 dev.py` does it as root)")
def test_each_mpi_rank_records_into_a_database_of_its_own(tmp_path):
    """The seed's promise for MPI: a database per process, named with ``-tid=<rank>``,
    under a real ``mpirun -n 4``."""
    (tmp_path / "ranks.py").write_text(textwrap.dedent('''
        import os
        from pypads.recording.callmonitor import intercept
        @intercept
        def f(x):
            return x
        f(int(os.environ["OMPI_COMM_WORLD_RANK"]) * 10)
    '''))
    # Open MPI refuses root unless told twice; CI runs as root.
    environment = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    result = subprocess.run(["mpirun", "-n", "4", "--oversubscribe", sys.executable, str(tmp_path / "ranks.py")],
                            cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not (tmp_path / "call-monitor").exists()
    for rank in range(4):
        assert load(tmp_path / f"call-monitor-tid={rank}").get("f", 1) == ([rank * 10], {})


def test_settings_thread_id_names_the_database(tmp_path):
    result = run_python('''
from pypads.recording.callmonitor import intercept, Settings, CONTEXT
Settings().enable_multi_threading(7)
@intercept
def f(x):
    return x
f(1)
Settings().enable_multi_threading(8)
CONTEXT.new()
f(2)
''', tmp_path)
    assert result.returncode == 0, result.stderr
    assert load(tmp_path / "call-monitor-tid=7").get("f", 1) == ([1], {})
    assert load(tmp_path / "call-monitor-tid=8").get("f", 1) == ([2], {})


def test_database_survives_sigkill(tmp_path):
    result = run_python('''
import os, signal, numpy as np
from pypads.recording.callmonitor import intercept
@intercept
def step(i, data=None):
    return i
for i in range(300):
    step(i, data=np.full(3, i) if i % 10 == 0 else None)
    if i == 249:
        os.kill(os.getpid(), signal.SIGKILL)
''', tmp_path)
    assert result.returncode == -9
    db = load(tmp_path / "call-monitor")
    assert db.calls("step") == 250
    assert db.get("step", 250) == ([249], {"data": None})
    np.testing.assert_array_equal(db.get("step", 241)[1]["data"], np.full(3, 240))


def test_unsaveable_argument_never_breaks_the_call(tmp_path):
    result = run_python('''
import threading
from pypads.recording.callmonitor import intercept
@intercept
def f(lock, g, n):
    with lock:
        return g(n)
print(f(threading.Lock(), lambda v: v + 1, 41))
print(f(threading.Lock(), lambda v: v + 1, 1))
''', tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["42", "2"]
    db = load(tmp_path / "call-monitor")
    (lock, function, n), _ = db.get("f", 2)
    assert isinstance(lock, Unsaved) and "lock" in lock.type and "pickle" in lock.reason
    assert isinstance(function, Pickled) and n == 1  # a lambda pickles; loading it needs consent
    assert load(tmp_path / "call-monitor", allow_pickle=True).get("f", 2)[0][1](1) == 2


def test_accumulator_and_content_addressing(tmp_path):
    result = run_python('''
import numpy as np
from pypads.recording.callmonitor import intercept
@intercept
def tiny(i):
    return i
@intercept
def big(array, i):
    return i
for i in range(100_000):
    tiny(i)
array = np.random.RandomState(0).rand(1000, 100)
for i in range(10):
    big(array, i)
''', tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    root = tmp_path / "call-monitor"
    assert sorted(path.name for path in (root / "__main__.tiny").iterdir()) == ["calls.jsonl", "function.json"]
    objects = list((root / "objects").iterdir())
    assert len(objects) == 1 and objects[0].stat().st_size > 800_000
    assert objects[0].stat().st_nlink == 11  # the object and the ten calls' arg_0.npy are one file
    # named by the BLAKE3 hash of the file itself, so anyone can check it with b3sum
    assert objects[0].name == blake3(objects[0].read_bytes()).hexdigest() + ".npy"
    db = load(root)
    assert db.calls("tiny") == 100_000 and db.get("tiny", 99_999) == ([99_998], {})
    np.testing.assert_array_equal(db.get("big", 10)[0][0], np.random.RandomState(0).rand(1000, 100))


def test_names_are_qualified_and_short_names_work_when_unambiguous(tmp_path):
    result = run_python('''
from pypads.recording.callmonitor import intercept
class A:
    @intercept
    def run(self, x):
        return x
class B:
    @intercept
    def run(self, x):
        return -x
@intercept
def only(x):
    return x
A().run(1); B().run(2); B().run(3); only(4)
''', tmp_path)
    assert result.returncode == 0, result.stderr
    db = load(tmp_path / "call-monitor")
    assert db.calls("__main__.A.run") == 1 and db.calls("B.run") == 2 and db.get("only", 1) == ([4], {})
    with pytest.raises(CallMonitorError, match="ambiguous"):
        db.get("run", 1)
    for n in (0, 3):
        with pytest.raises(CallMonitorError, match="invocation counts start at 1 and it has 2 call"):
            db.get("B.run", n)


def test_results_exceptions_and_replay(tmp_path):
    result = run_python('''
import numpy as np
from pypads.recording.callmonitor import intercept
@intercept
def scale(a, *, factor=2):
    if factor == 0:
        raise ValueError("no zero")
    return a * factor
scale(np.arange(3))
try:
    scale(np.arange(3), factor=0)
except ValueError:
    pass
''', tmp_path)
    assert result.returncode == 0, result.stderr
    db = load(tmp_path / "call-monitor")
    np.testing.assert_array_equal(db.get_result("scale", 1), [0, 2, 4])
    assert db.get_args("scale", 1).factor == 2  # keyword-only default filled in
    with pytest.raises(CallMonitorError, match="raised ValueError: no zero"):
        db.get_result("scale", 2)
    records = [json.loads((tmp_path / "call-monitor" / "__main__.scale" / str(n) / "record.json").read_text()) for n in (1, 2)]
    assert records[0]["duration"] > 0 and records[1]["exception"]["type"] == "ValueError"


def test_replay_runs_the_original_function(tmp_path, monkeypatch):
    (tmp_path / "mymodule.py").write_text(textwrap.dedent('''
        import numpy as np
        from pypads.recording.callmonitor import intercept
        calls = []
        @intercept
        def total(a, offset=0):
            calls.append(1)
            return a.sum() + offset
    '''))
    result = run_python("import sys, numpy as np; sys.path.insert(0, '.'); import mymodule; mymodule.total(np.arange(4), offset=1)", tmp_path)
    assert result.returncode == 0, result.stderr
    monkeypatch.syspath_prepend(str(tmp_path))
    import mymodule

    replay = load(tmp_path / "call-monitor").replay("total", 1, allow_modules=["mymodule"])
    assert replay.matches and replay.result == 7 == replay.recorded
    assert mymodule.calls == [1]  # the original ran, not the recording wrapper... once
    passed = load(tmp_path / "call-monitor").replay("total", 1, mymodule.total)  # unwrapped: records nothing
    assert passed.matches and mymodule.calls == [1, 1]


@pytest.mark.parametrize("damage", ["not a database", "foreign db.json", "garbled record"])
def test_corrupt_or_foreign_folder_is_one_clear_error_and_untouched(tmp_path, damage):
    root = tmp_path / "db"
    if damage == "not a database":
        root.mkdir()
        (root / "notes.txt").write_text("hello")
    else:
        assert run_python("from pypads.recording.callmonitor import intercept\n@intercept\ndef f(x):\n    return x\nf(1); f(2)", tmp_path).returncode == 0
        (tmp_path / "call-monitor").rename(root)
        if damage == "foreign db.json":
            (root / "db.json").write_text('{"format": "something else"}')
        else:
            lines = root / "__main__.f" / "calls.jsonl"
            lines.write_text("{broken\n" + lines.read_text())
    before = {path: (path.stat().st_mtime_ns, path.read_bytes() if path.is_file() else None) for path in root.rglob("*")}
    with pytest.raises(CallMonitorError) as raised:
        load(root)
    assert str(root) in str(raised.value)
    assert {path: (path.stat().st_mtime_ns, path.read_bytes() if path.is_file() else None) for path in root.rglob("*")} == before


def test_call_recorder_logger_records_into_the_run_and_replays(make_tracker, read_run):
    from sklearn import datasets
    from sklearn.tree import DecisionTreeClassifier

    from pypads.recording.callmonitor import intercept

    @intercept
    def prepare(data, *, shift=0.0):
        return data + shift

    X, y = datasets.load_iris(return_X_y=True)
    tracker = make_tracker(config={"events": {"calls": {"on": ["pypads_fit", "pypads_predict"]}}})
    shifted = prepare(X, shift=1.0)
    model = DecisionTreeClassifier(random_state=0).fit(shifted, y)
    model.predict(shifted[:5])
    run_id = tracker.run_id
    tracker.end_run()

    files = read_run(run_id).artifacts("callmonitor")
    assert "callmonitor/db.json" in files
    # X, X+1 (prepare's result and fit's input: stored once), y, X+1[:5], the predictions
    assert len([path for path in files if path.startswith("callmonitor/objects/")]) == 5
    db = load(run_id)
    assert db.calls("DecisionTreeClassifier.fit") == 1 and db.calls("prepare") == 1
    np.testing.assert_array_equal(db.get("prepare", 1)[0][0], X)
    assert db.get_args("prepare", 1).shift == 1.0
    estimator, data = db.get("DecisionTreeClassifier.predict", 1)[0]
    assert isinstance(estimator, Pickled)  # the instance is pickled: loading it is opt-in
    trusted = load(f"runs:/{run_id}/callmonitor", allow_pickle=True)
    replay = trusted.replay("DecisionTreeClassifier.predict", 1, allow_modules=["sklearn"])
    assert replay.matches and list(replay.result) == list(model.predict(shifted[:5]))


def test_many_recorded_calls_in_a_run_are_chunked(make_tracker, read_run):
    from pypads.recording.callmonitor import intercept

    @intercept
    def tick(i):
        return i

    tracker = make_tracker()
    for i in range(2500):
        tick(i)
    run_id = tracker.run_id
    tracker.end_run()
    name = f"{__name__}.test_many_recorded_calls_in_a_run_are_chunked.<locals>.tick"
    chunks = [path for path in read_run(run_id).artifacts("callmonitor") if "calls-" in path]
    assert len(chunks) == 3
    assert load(run_id).calls(name) == 2500


def test_in_a_run_threads_unsaveable_values_and_children(tmp_path, empty_store):
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "mlflow.db").write_bytes(empty_store.read_bytes())
    (tmp_path / "work.py").write_text(textwrap.dedent('''
        import threading
        from pypads.recording.callmonitor import intercept
        @intercept
        def work(thread, i, lock=None):
            return thread * 1000 + i
        def child():
            work(-1, 0)
    '''))
    environment = {key: value for key, value in os.environ.items() if key != "MLFLOW_TRACKING_URI"}
    environment["PYPADS_HOME"] = str(tmp_path / "home")
    result = subprocess.run([sys.executable, "-c", textwrap.dedent('''
        import multiprocessing, os, sys, threading
        sys.path.insert(0, os.getcwd())
        from pypads import PyPads
        from work import work, child
        if __name__ == "__main__":
            tracker = PyPads(name="calls")
            threads = [threading.Thread(target=lambda t=t: [work(t, i) for i in range(500)]) for t in range(8)]
            [t.start() for t in threads]
            [t.join() for t in threads]
            work(9, 9, lock=threading.Lock())
            process = multiprocessing.get_context("spawn").Process(target=child)
            process.start(); process.join()
            print(tracker.run_id, process.pid)
    ''')], cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    run_id, child_pid = result.stdout.split()
    db = load(run_id, tracking_uri=f"sqlite:///{tmp_path / 'home' / 'mlflow.db'}")
    assert db.calls("work") == 4001
    assert {db.get_result("work", n) for n in range(1, 4002)} == {t * 1000 + i for t in range(8) for i in range(500)} | {9009}
    lock = db.get("work", 4001)[1]["lock"]
    assert isinstance(lock, Unsaved) and "lock" in lock.type
    assert load(tmp_path / f"call-monitor-tid={child_pid}").get("work", 1) == ([-1, 0], {})


def test_every_array_layout_is_stored_as_np_save_writes_it_named_by_its_blake3_hash(tmp_path, monkeypatch):
    from pypads.recording.callmonitor import CONTEXT, intercept

    monkeypatch.chdir(tmp_path)
    CONTEXT.new()

    @intercept
    def consume(array):
        return array.shape

    big = np.arange(3_000_000, dtype=np.float64)  # 24 MB: written and hashed side by side, in pieces
    square = np.random.RandomState(1).rand(300, 200)
    arrays = [big, np.asfortranarray(square), square[::2, ::3], np.array(7.5), np.zeros((0, 4)),
              np.arange(5, dtype=">i4"), np.array(["2020-01-01", "2021-06-30"], dtype="datetime64[D]"),
              np.zeros(3, dtype=[("a", "<i4"), ("b", "<f8")])]
    for array in arrays:
        consume(array)
    consume(np.ascontiguousarray(square[::2, ::3]))  # the same content as a strided view before: stored once
    try:
        root = CONTEXT.folder  # fixed at the first recorded call of the process
        objects = sorted((root / "objects").iterdir())
        assert len(objects) == len(arrays)
        for path in objects:
            assert path.name == blake3(path.read_bytes()).hexdigest() + ".npy"
        expected = set()
        for array in arrays:
            np.save(tmp_path / "plain.npy", array)
            expected.add((tmp_path / "plain.npy").read_bytes())
        assert {path.read_bytes() for path in objects} == expected
        db = load(root)
        for number, array in enumerate(arrays, start=1):
            np.testing.assert_array_equal(db.get("consume", number)[0][0], array)
    finally:
        CONTEXT.new()


def test_an_array_changed_by_the_call_is_recorded_as_it_was_before(tmp_path, monkeypatch):
    from pypads.recording.callmonitor import CONTEXT, intercept

    monkeypatch.chdir(tmp_path)
    CONTEXT.new()

    @intercept
    def scale(array):
        array *= 2
        return array.sum()

    data = np.ones(1000)
    scale(data)
    try:
        recorded = load(CONTEXT.folder).get("scale", 1)[0][0]
        np.testing.assert_array_equal(recorded, np.ones(1000))
    finally:
        CONTEXT.new()
