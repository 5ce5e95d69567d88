"""A pandas column's values, read where pandas keeps them: a numpy-held column as its own
array, a pyarrow string column from pyarrow's buffers, anything else converted in slices
(an extension dtype's ``to_numpy`` would build a whole new array at once)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from pypads.recording.content.sizes import SLICE


def column_values(column: Any) -> Iterator[Any]:
    """A pandas column's (or index's) values: its own array when numpy holds it, else
    converted in slices (an extension dtype's ``to_numpy`` builds a whole new array)."""
    pandas = sys.modules["pandas"]
    if isinstance(column, pandas.RangeIndex):  # its values exist only when asked for
        yield ("range", column.start, column.stop, column.step)
        return
    if isinstance(column.dtype, np.dtype):
        yield column.to_numpy(copy=False)
        return
    strings = _arrow_strings(column)
    if strings is not None:
        yield from strings
        return
    positions = column.iloc if isinstance(column, pandas.Series) else column
    for start in range(0, len(column), SLICE):
        yield positions[start:start + SLICE].to_numpy()


def _arrow_strings(column: Any) -> Iterator[np.ndarray] | None:
    """A column of strings pyarrow holds without missing values: per chunk, the
    strings' lengths (in slices) and their UTF-8 bytes as pyarrow keeps them (no copy).
    None for any other column."""
    pyarrow = sys.modules.get("pyarrow")
    to_arrow = getattr(getattr(column, "array", None), "__arrow_array__", None)
    if pyarrow is None or to_arrow is None:
        return None
    try:
        chunks = to_arrow().chunks
    except Exception:  # an extension array that cannot hand its memory to pyarrow
        return None
    large = pyarrow.types.is_large_string
    if any(chunk.null_count or not (pyarrow.types.is_string(chunk.type) or large(chunk.type)) for chunk in chunks):
        return None
    return _arrow_parts(chunks, large)


def _arrow_parts(chunks: list[Any], large: Callable[[Any], bool]) -> Iterator[np.ndarray]:
    for chunk in chunks:
        _, offsets, data = chunk.buffers()
        width = np.int64 if large(chunk.type) else np.int32
        bounds = np.frombuffer(offsets, dtype=width)[chunk.offset:chunk.offset + len(chunk) + 1]
        # Lengths, not offsets: a slice of a longer array has the same lengths, other offsets.
        for start in range(0, len(chunk), SLICE):
            yield np.diff(bounds[start:start + SLICE + 1]).astype(np.int64)
        if len(bounds):
            yield np.frombuffer(data, dtype=np.uint8)[int(bounds[0]):int(bounds[-1])]
