"""Digesting a large input never copies it: a tracked fit on ~200 MB of each kind a user
passes peaks within 50 MB of the same script untracked, and its summary has a digest."""

from __future__ import annotations

import json
import re
import textwrap

import numpy as np
import pandas as pd
import pytest
from conftest import only_run, run_script

from pypads.recording.content import npy
from pypads.recording.content.digests import content_digest
from pypads.recording.content.sampling import SAMPLE_ABOVE
from pypads.recording.content.serialize import WriteFormats, serialize, summary
from pypads.recording.content.sizes import approximate_size

# Each builds X (~200 MB) and y from a seeded generator, the same in both runs.
INPUTS = {
    "fortran array": """
        X = rng.rand(50, 200 * 2**20 // 8 // 50).T  # the transpose of a C array: Fortran order, no copy
    """,
    "dataframe with strings": """
        rows = 1_500_000
        X = pd.DataFrame({f"x{i}": rng.rand(rows) for i in range(10)})
        X["count"] = rng.randint(0, 100, rows)
        X["name"] = pd.Series([f"customer-{i:09d}" for i in range(rows)])  # pandas' string dtype
        X["city"] = pd.Series([f"city-{i % 977}" for i in range(rows)], dtype=object)
    """,
    "sparse matrix": """
        nonzero = 16 * 2**20  # 8-byte values and 4-byte indices: ~200 MB
        X = sparse.csr_matrix((rng.rand(nonzero), rng.randint(0, 10_000, nonzero).astype(np.int32),
                               np.arange(0, nonzero + 1, 64)), shape=(nonzero // 64, 10_000))
    """,
    "nested list": """
        X = rng.rand(100_000, 60).tolist()  # 6M floats, ~190 MB of Python objects; the list itself 0.8 MB
    """,
}

SCRIPT = """
import os
TRACKED = os.environ["MEMORY_RUN"] == "tracked"
if TRACKED:
    from pypads import PyPads
    tracker = PyPads(uri={uri!r}, name="memory")
import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.dummy import DummyRegressor

def peak_mb():
    # VmHWM, not ru_maxrss: ru_maxrss keeps the parent's size from before exec.
    return int(next(line for line in open("/proc/self/status") if line.startswith("VmHWM:")).split()[1]) / 1024

rng = np.random.RandomState(0)
{build}
y = np.zeros(X.shape[0] if hasattr(X, "shape") else len(X))
DummyRegressor().fit(X, y)  # accepts any X: the memory measured is pypads' own
# The peak through the fit: what the end of the run costs is not what this test is about.
print(peak_mb())
if TRACKED:
    tracker.end_run()
"""


@pytest.mark.parametrize("kind", INPUTS)
def test_a_tracked_fit_on_a_large_input_adds_little_memory_and_digests_it(kind, tmp_path, store_uri):
    code = SCRIPT.format(uri=store_uri, build=textwrap.dedent(INPUTS[kind]))
    peaks = {}
    for mode in ("untracked", "tracked"):
        result = run_script(code, tmp_path, env={"MEMORY_RUN": mode}, timeout=300)
        assert result.returncode == 0, result.stderr[-3000:]
        peaks[mode] = float(result.stdout.split()[0])
    assert peaks["untracked"] > 200, peaks  # the data is there
    assert peaks["tracked"] - peaks["untracked"] <= 50, peaks

    run = only_run(store_uri)
    given = json.loads(run.artifact_text("calls/DummyRegressor.fit.jsonl").splitlines()[1])["inputs"]["X"]
    if kind == "nested list":  # no dataset: summarised in the call's line
        assert re.fullmatch("[0-9a-f]{64}", given["summary"].get("blake3", "")), given
        assert given["summary"]["approximate_bytes"] > 150 * 2**20, given
    else:  # a dataset of the run, named by its digest
        assert re.fullmatch("[0-9a-f]{16}", given["digest"]), given


class Unprintable:
    """An element whose repr must never be asked for: it says so loudly."""

    def __repr__(self) -> str:
        raise AssertionError("the repr of a large value was built")


def test_a_large_nested_list_is_summarised_without_building_its_text():
    # 2,000 rows of 1 KB strings: 2 MB of text in a list whose own size is 16 KB.
    rows = [["x" * 1000, index] for index in range(2000)] + [[Unprintable()]]
    extension, content = serialize(rows, WriteFormats.text, 1_000_000, lambda: {})
    assert extension == "summary.json"
    summary = json.loads(content)
    assert summary["summary_of"] == "larger than max_bytes=1000000"
    assert summary["approximate_bytes"] > 2_000_000
    assert "blake3" not in summary  # an arbitrary object's content is not hashed


def test_digests_follow_content_not_memory():
    frame = pd.DataFrame({"x": np.arange(5.0), "name": ["a", "b", "c", "d", "e"]})
    assert content_digest(frame) == content_digest(frame.copy())
    changed = frame.copy()
    changed.loc[4, "name"] = "f"
    assert content_digest(changed) != content_digest(frame)

    array = np.arange(12.0).reshape(3, 4)
    assert content_digest(array[:, ::2]) == content_digest(np.ascontiguousarray(array[:, ::2]))
    table = array.tolist()
    assert content_digest(table) == content_digest([list(row) for row in table])
    assert content_digest(table) != content_digest([*table[:2], [0.0, 1.0, 2.0, 3.5]])
    looped: list[object] = [1, 2]
    looped.append(looped)
    assert content_digest(looped) is not None  # a list that holds itself ends


def test_a_value_over_64_mb_is_digested_from_a_sample_that_still_tells_values_apart():
    rows = SAMPLE_ABOVE // 8 // 50 + 1000
    array = np.random.RandomState(0).rand(rows, 50)
    described = summary(array, "large", {})
    assert described["digest_of"] == "sample" and described["approximate_bytes"] == array.nbytes
    assert content_digest(array.copy()) == described["blake3"]  # the same content, another object
    assert content_digest(np.asfortranarray(array)) != described["blake3"]
    assert content_digest(array.astype(np.float32)) != content_digest(array.astype(np.float64))
    changed = array.copy()
    changed[0, 0] += 1  # the first and the last windows are always in the sample
    assert content_digest(changed) != described["blake3"]
    changed[0, 0], changed[-1, -1] = array[0, 0], array[-1, -1] + 1
    assert content_digest(changed) != described["blake3"]
    assert content_digest(array[:-1]) != described["blake3"]  # another shape

    table = array[: rows // 2].tolist()  # a nested list of ~75 MB
    described = summary(table, "large", {})
    assert described["digest_of"] == "sample"
    walked = approximate_size(table)
    assert 0.9 < described["approximate_bytes"] / walked < 1.1  # estimated from the sample
    assert content_digest([list(row) for row in table]) == described["blake3"]
    assert content_digest(tuple(table)) != described["blake3"]

    small = array[:1000]
    assert "digest_of" not in summary(small, "large", {})  # up to 64 MB: all of it
    assert content_digest(small) == npy.digest(small)


@pytest.mark.parametrize("kind", ["fortran array", "dataframe with strings", "sparse matrix", "nested list"])
def test_a_whole_digest_never_copies_the_value(kind, tmp_path):
    """Up to 64 MB a value is hashed whole: the peak grows by far less than the value."""
    smaller = {"fortran array": ("200 *", "40 *"), "dataframe with strings": ("1_500_000", "250_000"),
               "sparse matrix": ("16 * 2**20", "3 * 2**20"), "nested list": ("100_000", "20_000")}[kind]
    build = textwrap.dedent(INPUTS[kind]).replace(*smaller)
    script = textwrap.dedent("""
        import numpy as np, pandas as pd
        from scipy import sparse
        from pypads.recording.content.serialize import summary
        rng = np.random.RandomState(0)
    """) + build + textwrap.dedent("""
        def peak():
            return int(next(line for line in open("/proc/self/status") if line.startswith("VmHWM:")).split()[1]) // 1024
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")  # the peak starts again from what the process holds now
        before = peak()
        described = summary(X, "large", {})
        print(peak() - before, described["approximate_bytes"] // 2**20, "digest_of" in described)
    """)
    grown, size, sampled = run_script(script, tmp_path).stdout.split()
    assert sampled == "False" and int(size) > 30
    assert int(grown) <= 16, f"digesting {size} MB of a {kind} grew the peak by {grown} MB"
