"""Samples of large values: what the digest of a value too large to read whole is made of.

Hashing a value reads all of it: a tenth of a second for 500 MB of floats, a third of a
second for a nested list of 200 MB, as much as a cheap fit on the same data takes. So
a value over :data:`SAMPLE_ABOVE` bytes is digested from a sample: its kind, shape and
dtypes, and :data:`WINDOWS` evenly spaced windows of its contents (the first and the
last included), about 1 MB in all, read where the value lies (no copy of the whole).

What a sampled digest can tell: two values of another kind, shape or dtype, or that
differ inside a window, differ. Two values that differ only between windows (one row
changed in a 500 MB table) get the same digest. MLflow's own dataset digests make the
same trade with less (the first 10,000 elements); a value up to ``SAMPLE_ABOVE`` is
hashed whole. A summary says which its digest is (``"digest_of": "sample"``).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from pypads.recording.content import npy
from pypads.recording.content.sizes import approximate_size

# 64 MB is hashed whole in about 20 ms here (BLAKE3 at memory speed): below that, a
# whole digest costs less than any fit on the value.
SAMPLE_ABOVE = 64 << 20
WINDOWS = 256
WINDOW_BYTES = 4096  # of an array's memory, per window
WINDOW_ITEMS = 16  # rows of a table, or at most this many elements of a list, per window
# A sample of a value inside a container has a share of the budget, but no less than this.
SMALLEST_SHARE = 64 << 10


def sample(value: Any, size: int) -> tuple[Any, ...] | None:
    """A small stand-in for ``value`` (of ``size`` bytes, over :data:`SAMPLE_ABOVE`):
    its kind, shape, dtypes and sampled contents, in values the digest's encoding takes.
    None for a value of a kind this cannot sample (it is then hashed whole)."""
    del size  # every kind below samples by position, whatever its size
    if isinstance(value, np.ndarray):
        return _array(value)
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(value, (pandas.DataFrame, pandas.Series)):
        return _frame(value)
    scipy_sparse = sys.modules.get("scipy.sparse")
    if scipy_sparse is not None and scipy_sparse.issparse(value):
        return _sparse(value)
    if isinstance(value, (list, tuple)):
        return ("sequence", type(value).__name__, len(value), _items(value))
    return None


def _windows(length: int, width: int) -> np.ndarray:
    """The start of each window of ``width`` over ``length`` positions, evenly spaced,
    the first at 0 and the last ending at ``length``."""
    if length <= WINDOWS * width:
        return np.arange(0, length, max(width, 1), dtype=np.int64)
    # Steps of more than ``width`` apart: distinct after truncation, no np.unique needed
    # (whose first call imports a numpy submodule, 10 ms in the user's first tracked fit).
    return np.linspace(0, length - width, WINDOWS).astype(np.int64)


def _positions(length: int, width: int) -> np.ndarray:
    starts = _windows(length, width)
    positions = (starts[:, None] + np.arange(width, dtype=np.int64)).ravel()
    return positions[positions < length]


def _array(array: np.ndarray) -> tuple[Any, ...]:
    described = ("ndarray", tuple(array.shape), array.dtype.str)
    if array.dtype.hasobject or not (array.flags.c_contiguous or array.flags.f_contiguous):
        # A strided view or Python objects: gather the windows' elements (a small copy).
        width = max(1, WINDOW_BYTES // max(array.itemsize, 1))
        picked = array.flat[_positions(array.size, width)] if array.size else array.ravel()
        return (*described, "flat", picked.tolist() if array.dtype.hasobject else picked)
    memory = npy.memory(array)
    order = "C" if array.flags.c_contiguous else "F"
    pieces = b"".join(bytes(memory[start:start + WINDOW_BYTES]) for start in _windows(len(memory), WINDOW_BYTES))
    return (*described, order, pieces)


def _frame(frame: Any) -> tuple[Any, ...]:
    rows = frame.iloc[_positions(len(frame), WINDOW_ITEMS)]  # a copy of the sampled rows only
    dtypes = [str(dtype) for dtype in frame.dtypes] if frame.ndim == 2 else [str(frame.dtype)]
    return (type(frame).__name__, tuple(frame.shape), dtypes, rows)


def _sparse(matrix: Any) -> tuple[Any, ...]:
    names = {"csr": ("data", "indices", "indptr"), "csc": ("data", "indices", "indptr"),
             "bsr": ("data", "indices", "indptr"), "coo": ("data", "row", "col"), "dia": ("data", "offsets")}
    parts = [(name, _array(np.asarray(getattr(matrix, name)))) for name in names.get(matrix.format, ())]
    if not parts:  # dok, lil: dicts and lists of Python objects, nothing to sample by position
        return ("sparse", matrix.format, tuple(matrix.shape), matrix.nnz)
    return ("sparse", matrix.format, tuple(matrix.shape), matrix.nnz, parts)


def picked(sequence: list[Any] | tuple[Any, ...]) -> list[Any]:
    """The elements of a list's (or tuple's) windows."""
    return [sequence[position] for position in _positions(len(sequence), _items_per_window(sequence))]


def _items_per_window(sequence: list[Any] | tuple[Any, ...]) -> int:
    """As many elements as fill a window's bytes, judged by the first: the rows of a
    nested list are alike, and 16 rows of 50 floats would make a sample of 6 MB."""
    if not sequence:
        return WINDOW_ITEMS
    first = approximate_size(sequence[0], WINDOW_BYTES * WINDOW_ITEMS)
    return max(1, min(WINDOW_ITEMS, WINDOW_BYTES // max(first, 1)))


def _items(sequence: list[Any] | tuple[Any, ...]) -> list[Any]:
    """The windows' elements; one that is itself large (an array in a list) sampled too."""
    picked_items = picked(sequence)
    share = max(SAMPLE_ABOVE // max(len(picked_items), 1), SMALLEST_SHARE)
    return [_small(item, share) for item in picked_items]


def _small(item: Any, share: int) -> Any:
    nbytes = getattr(item, "nbytes", None)
    if isinstance(nbytes, int) and nbytes > share:
        return sample(item, nbytes) or item
    if isinstance(item, (list, tuple)) and len(item) > WINDOWS * WINDOW_ITEMS:
        return ("sequence", type(item).__name__, len(item), _items(item))
    return item
