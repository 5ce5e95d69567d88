"""Sizes: how many bytes a value holds, estimated without copying or serialising it,
by a walk that can stop at a bound (so a huge nested list costs no more than a small one).

Also the parts other stages walk alike: runs of a sequence's elements, a pandas object's
own size, a sparse matrix's arrays.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from itertools import chain, islice
from typing import Any

import numpy as np

# Elements per step when a sequence is walked: a step's own temporary lists and buffers
# stay within a few MB whatever the sequence's length.
SLICE = 65_536
SIZE_SLICE = 1024

SCALARS = frozenset({type(None), bool, int, float, complex, str, bytes})
# Scalars of one fixed size each, so a homogeneous run of them is sized by a product.
FIXED_SIZES = {float: sys.getsizeof(0.0), bool: sys.getsizeof(True), type(None): sys.getsizeof(None)}
END = object()  # the end of an iterator, for next(…, END)


def approximate_size(value: Any, limit: int | None = None) -> int:
    """An estimate of the bytes a value holds, counting what containers hold (a list's
    floats, a DataFrame's strings), without copying or serialising it.

    With a ``limit`` the walk stops as soon as the estimate passes it (and returns a number
    above it), so a huge nested list costs no more than a small one."""
    total = 0
    for size in part_sizes(value, limit):
        total += size
        if limit is not None and total > limit:
            break
    return total



def part_sizes(value: Any, limit: int | None) -> Iterator[int]:
    """The sizes of ``value``'s parts, depth first; containers are walked without
    recursion, and a container met again inside itself is counted once."""
    stack: list[tuple[Iterator[Any], int | None]] = [(iter((value,)), None)]
    inside: set[int] = set()  # the containers being walked: a cycle ends here
    while stack:
        children, owner = stack[-1]
        child = next(children, END)
        if child is END:
            stack.pop()
            inside.discard(owner)
            continue
        if isinstance(child, Run):
            yield run_size(child, stack)
            continue
        own, parts = _own_size(child, limit)
        yield own
        if parts is not None and id(child) not in inside:
            inside.add(id(child))
            stack.append((parts, id(child)))


def _own_size(value: Any, limit: int | None) -> tuple[int, Iterator[Any] | None]:
    """The bytes of ``value`` itself, and its parts when they are walked on their own."""
    kind = type(value)
    if kind in SCALARS:
        return sys.getsizeof(value), None
    # Short runs: a bounded walk stops within a thousand rows of its limit.
    if kind in (list, tuple, set, frozenset):
        return sys.getsizeof(value), runs(value, SIZE_SLICE)
    if kind is dict:
        return sys.getsizeof(value), runs(chain.from_iterable(value.items()), SIZE_SLICE)
    if isinstance(value, np.ndarray):
        return value.nbytes, (runs(value.flat, SIZE_SLICE) if holds_objects(value) else None)
    held_by_pandas = pandas_size(value, limit)
    if held_by_pandas is not None:
        return held_by_pandas, None
    sparse = sparse_parts(value)
    if sparse is not None:
        return sum(part.nbytes for _, part in sparse), None
    nbytes = getattr(value, "nbytes", None)
    return (nbytes if isinstance(nbytes, int) else sys.getsizeof(value)), None


class Run(list[Any]):
    """Consecutive elements of a sequence (at most ``SLICE``), taken together."""


def runs(values: Iterable[Any], length: int = SLICE) -> Iterator[Run]:
    remaining = iter(values)
    while run := Run(islice(remaining, length)):
        yield run


def object_runs(values: np.ndarray) -> Iterator[Run]:
    return runs(values.flat)  # in C order, without a copy


def run_size(run: Run, stack: list[tuple[Iterator[Any], int | None]]) -> int:
    """The bytes of a run's scalars (containers among them are walked on their own)."""
    kinds = set(map(type, run))
    if len(kinds) == 1 and (kind := next(iter(kinds))) in FIXED_SIZES:
        return len(run) * FIXED_SIZES[kind]
    if kinds <= SCALARS:
        return sum(map(sys.getsizeof, run))
    if kinds <= {list, tuple}:  # rows: a table as a list of lists
        inner = set(map(type, chain.from_iterable(run)))
        if inner <= SCALARS:
            rows = sum(map(sys.getsizeof, run))
            if len(inner) == 1 and (kind := next(iter(inner))) in FIXED_SIZES:
                return rows + sum(map(len, run)) * FIXED_SIZES[kind]
            return rows + sum(map(sys.getsizeof, chain.from_iterable(run)))
    stack.append((iter(list(run)), None))
    return 0


def pandas_size(value: Any, limit: int | None = None) -> int | None:
    pandas = sys.modules.get("pandas")  # not imported: the value cannot be a pandas object
    if pandas is None or not isinstance(value, (pandas.DataFrame, pandas.Series, pandas.Index)):
        return None
    shallow = int(np.sum(value.memory_usage()))
    if limit is not None and shallow > limit:  # deep sizing walks every string: not needed
        return shallow
    try:  # deep: an object column's strings, not only its pointers
        return int(np.sum(value.memory_usage(deep=True)))
    except Exception:  # a pandas object this version cannot size deeply
        return shallow


def sparse_parts(value: Any) -> list[tuple[str, np.ndarray]] | None:
    """The arrays a scipy sparse matrix or array keeps its values in; None for any
    other value, and for the dict- and list-based formats (dok, lil)."""
    sparse = sys.modules.get("scipy.sparse")
    if sparse is None or not sparse.issparse(value):
        return None
    names = {"csr": ("data", "indices", "indptr"), "csc": ("data", "indices", "indptr"),
             "bsr": ("data", "indices", "indptr"), "coo": ("data", "row", "col"), "dia": ("data", "offsets")}
    if value.format not in names:
        return None
    return [(name, getattr(value, name)) for name in names[value.format]]


def holds_objects(values: np.ndarray) -> bool:
    """Whether numpy cannot write the array's memory as a ``.npy`` file (Python objects,
    variable-width strings)."""
    return values.dtype.hasobject or not getattr(type(values.dtype), "_legacy", True)


def type_name(value: Any) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"
