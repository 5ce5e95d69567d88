"""The tagged encoding a content digest hashes: a value's kind, shape, dtypes and values,
fed into BLAKE3 as it is produced, depth first and without recursion, never copying the
value (a numpy-held column from its own memory, a pyarrow string column from its buffers,
anything else converted in bounded pieces).
"""

from __future__ import annotations

import struct
import sys
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from itertools import accumulate, chain
from typing import Any

import numpy as np
from blake3 import blake3

from pypads.recording.content import npy
from pypads.recording.content.columns import column_values
from pypads.recording.content.sizes import (
    END,
    FIXED_SIZES,
    SCALARS,
    Run,
    holds_objects,
    object_runs,
    pandas_size,
    runs,
    sparse_parts,
    type_name,
)

# Elements of a table's rows packed into one typed array (8 MB of floats).
ROW_ELEMENTS = 1 << 20
# Characters of strings joined into one piece before hashing (the join is a copy).
JOINED_CHARACTERS = 4 << 20
# Scalars that pack into a typed array: a homogeneous run of them is hashed in one step.
PACKED = {float: "<f8", int: "<i8", bool: "|b1"}

class Undigestable(Exception):
    """The value holds something the encoding does not cover."""


_FLOAT = struct.Struct("<d")
_COMPLEX = struct.Struct("<dd")
_LENGTH = struct.Struct("<q")


class DigestEncoder:
    """Feeds a value's encoding into a BLAKE3 hash, depth first and without recursion,
    and counts the bytes it meets (``size``, for Python containers: their walk is the
    same).

    Every part starts with a tag byte and, for a variable size, its length, so that no
    two different values encode alike."""

    def __init__(self) -> None:
        self.hash = blake3()
        self.size = 0
        self._stack: list[tuple[Iterator[Any], int | None]] = []
        self._inside: set[int] = set()
        self._sized_at: int | None = None  # the depth of a pandas object sized as a whole

    def add(self, value: Any) -> None:
        self._stack.append((iter((value,)), None))
        while self._stack:
            parts, owner = self._stack[-1]
            part = next(parts, END)
            if part is END:
                self._stack.pop()
                self._inside.discard(owner)
                if self._sized_at == len(self._stack):
                    self._sized_at = None
            elif isinstance(part, _Rows):
                self._rows(part)
            elif isinstance(part, Run):
                self._run(part)
            else:
                self._one(part)

    def _put(self, tag: bytes, *pieces: Any) -> None:
        self.hash.update(tag)
        for piece in pieces:  # typed arrays as their bytes: blake3 takes only byte buffers
            self.hash.update(memoryview(piece).cast("B"))

    @property
    def _counting(self) -> bool:
        """Whether sizes are counted here: not inside a pandas object, sized as a whole."""
        return self._sized_at is None

    def _count(self, size: int) -> None:
        if self._counting:
            self.size += size

    def _walk(self, container: Any, parts: Iterable[Any]) -> None:
        """Encode ``parts`` next, as the content of ``container``."""
        if id(container) in self._inside:  # it holds itself: encoded as a back-reference
            self._put(b"@")
            return
        self._inside.add(id(container))
        self._stack.append((iter(parts), id(container)))

    def _one(self, value: Any) -> None:
        kind = type(value)
        if kind in SCALARS or isinstance(value, (np.generic, int, float, str, bytes)):
            self._count(sys.getsizeof(value))
            self._put(_scalar_bytes(value))
        elif kind in (list, tuple):
            self._count(sys.getsizeof(value))
            self._put(b"[" if kind is list else b"(", _LENGTH.pack(len(value)))
            self._walk(value, runs(value))
        elif kind is dict:
            self._count(sys.getsizeof(value))
            self._put(b"{", _LENGTH.pack(len(value)))
            self._walk(value, runs(chain.from_iterable(value.items())))
        elif isinstance(value, np.ndarray):
            self._count(value.nbytes)
            self._array(value)
        elif not (self._pandas(value) or self._sparse(value)):
            raise Undigestable(type_name(value))

    def _run(self, run: Run) -> None:
        """Up to ``SLICE`` elements: one typed array when they are all floats, ints or
        bools, groups of rows when they are rows (a table as a list of lists), else
        one by one."""
        kinds = set(map(type, run))
        if kinds <= SCALARS:
            if self._counting:
                self.size += sum(map(sys.getsizeof, run))
            self._scalars(run, kinds)
            return
        if len(kinds) == 1 and next(iter(kinds)) in (list, tuple):
            lengths = array("q", map(len, run))
            if max(lengths) <= ROW_ELEMENTS:
                self._stack.append((_row_groups(run, lengths), None))
                return
        self._stack.append((iter(list(run)), None))

    def _scalars(self, values: list[Any], kinds: set[type]) -> None:
        """Scalars: one typed array when they are of one packable kind, else each one's
        tagged bytes."""
        if len(kinds) == 1 and (kind := next(iter(kinds))) in PACKED:
            try:
                packed = np.fromiter(values, PACKED[kind], len(values))
            except OverflowError:  # an int beyond 64 bits
                pass
            else:
                self._put(b"p", PACKED[kind].encode("ascii"), _LENGTH.pack(len(packed)), packed)
                return
        if kinds == {str} and sum(map(len, values)) <= JOINED_CHARACTERS:
            lengths = array("q", map(len, values))
            self._put(b"S", _LENGTH.pack(len(lengths)), lengths, _scalar_bytes("".join(values)))
            return
        self._put(b"m", _LENGTH.pack(len(values)), b"".join(map(_scalar_bytes, values)))

    def _rows(self, rows: _Rows) -> None:
        """Rows of numbers of one length as one 2-d array (as numpy reads them: 1 and
        1.0 in a row of floats hash alike); rows of scalars as their lengths and values;
        any others one by one."""
        if self._counting:
            self.size += sum(map(sys.getsizeof, rows))
        tag = b"R" if type(rows[0]) is list else b"T"
        # The first row's kinds keep numpy from building a deeper array of nested rows.
        if len(set(map(len, rows))) == 1 and rows[0] and set(map(type, rows[0])) <= SCALARS:
            try:
                table = np.array(rows)
            except (ValueError, OverflowError):  # ragged deeper down
                table = None
            if table is not None and table.ndim == 2 and table.dtype.kind in "biuf":
                self._count(table.size * FIXED_SIZES[float])
                self._put(tag, table.dtype.str.encode("ascii"), _LENGTH.pack(table.shape[0]),
                          _LENGTH.pack(table.shape[1]), table)
                return
        kinds = set(map(type, chain.from_iterable(rows)))
        if kinds <= SCALARS:
            values = list(chain.from_iterable(rows))
            if self._counting:
                self.size += sum(map(sys.getsizeof, values))
            self._put(tag, _LENGTH.pack(len(rows)), array("q", map(len, rows)))
            self._scalars(values, kinds)
            return
        self._stack.append((iter(list(rows)), None))

    def _array(self, values: np.ndarray) -> None:
        shape = _LENGTH.pack(values.ndim) + b"".join(_LENGTH.pack(length) for length in values.shape)
        if holds_objects(values):
            self._put(b"O", shape)
            self._walk(values, object_runs(values))
        else:  # the .npy file's hash: its header holds shape, dtype and order
            self._put(b"a", bytes.fromhex(npy.digest(values)))

    def _pandas(self, value: Any) -> bool:
        pandas = sys.modules.get("pandas")
        if pandas is None:
            return False
        if isinstance(value, pandas.DataFrame):
            header = [b"D", _LENGTH.pack(value.shape[0]), _LENGTH.pack(value.shape[1])]
            parts: Iterable[Any] = chain((value.index,), chain.from_iterable(value.items()))
        elif isinstance(value, (pandas.Series, pandas.Index)):
            header = [b"I" if isinstance(value, pandas.Index) else b"P", str(value.dtype).encode("utf-8"),
                      _LENGTH.pack(len(value))]
            parts = chain((value.name,), column_values(value))
        else:
            return False
        if self._sized_at is None:  # pandas sizes itself, strings included
            self.size += pandas_size(value) or 0
            self._sized_at = len(self._stack)
        self._put(*header)
        self._walk(value, parts)
        return True

    def _sparse(self, value: Any) -> bool:
        parts = sparse_parts(value)
        if parts is None:
            return False
        self._count(sum(part.nbytes for _, part in parts))
        self._put(b"X", value.format.encode("ascii"), _LENGTH.pack(len(value.shape)),
                  *(_LENGTH.pack(length) for length in value.shape))
        for name, part in parts:
            self._put(_scalar_bytes(name))
            self._array(part)
        return True


class _Rows(list[Any]):
    """Consecutive rows of a table, at most ``ROW_ELEMENTS`` values in all (or one row)."""


def _row_groups(run: Run, lengths: array[int]) -> Iterator[_Rows]:
    ends = list(accumulate(lengths))
    start = 0
    while start < len(run):
        end = max(bisect_right(ends, (ends[start - 1] if start else 0) + ROW_ELEMENTS), start + 1)
        yield _Rows(run[start:end])
        start = end


def _scalar_bytes(value: Any) -> bytes:
    """A scalar's tagged bytes."""
    if value is None:
        return b"N"
    if isinstance(value, (bool, np.bool_)):
        return b"?\x01" if value else b"?\x00"
    if isinstance(value, (int, np.integer)):
        number = int(value)
        return b"i" + number.to_bytes((number.bit_length() + 8) // 8, "little", signed=True)
    if isinstance(value, (float, np.floating)):
        return b"f" + _FLOAT.pack(value)
    if isinstance(value, (complex, np.complexfloating)):
        return b"c" + _COMPLEX.pack(value.real, value.imag)
    if isinstance(value, str):
        encoded = value.encode("utf-8", "surrogatepass")
        return b"s" + _LENGTH.pack(len(encoded)) + encoded
    if isinstance(value, bytes):
        return b"y" + _LENGTH.pack(len(value)) + value
    if isinstance(value, np.generic):  # datetime64, fixed-width strings, records
        return b"g" + value.dtype.str.encode("ascii") + value.tobytes()
    raise Undigestable(type_name(value))
