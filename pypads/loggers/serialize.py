"""Turning arbitrary call values into artifact files, small ones whole, large ones summarised.

A value's size is estimated before any text or pickle of it is built, and a large value
is summarised by a digest computed from its memory as it lies: nothing here copies a
user's data, whatever its layout (C or Fortran arrays, strided views, DataFrames of
mixed dtypes, sparse matrices, nested lists). Where a conversion cannot be avoided
(an extension-typed pandas column, a Fortran array's strided view) it is made in
bounded pieces.
"""

from __future__ import annotations

import json
import struct
import sys
from array import array
from collections.abc import Callable, Iterable, Iterator
from enum import Enum
from bisect import bisect_right
from itertools import accumulate, chain, islice
from typing import Any

import cloudpickle
import numpy as np
from blake3 import blake3

from pypads.callmonitor import npy
from pypads.loggers import sampling
from pypads.schemas import VALUE_SUMMARY


class WriteFormats(Enum):
    """How Input and Output write values: readable text or a (cloud)pickle to load again."""

    text = "txt"
    pickle = "pickle"


def write_format(value: str | WriteFormats) -> WriteFormats:
    """Accept ``"text"``, ``"pickle"`` or a :class:`WriteFormats` member."""
    if isinstance(value, WriteFormats):
        return value
    try:
        return WriteFormats[value]
    except KeyError:
        names = ", ".join(member.name for member in WriteFormats)
        raise ValueError(f"unknown write format {value!r}; use one of: {names}") from None


# Elements per step when a sequence is walked: a step's own temporary lists and buffers
# stay within a few MB whatever the sequence's length.
SLICE = 65_536
SIZE_SLICE = 1024
# Elements of a table's rows packed into one typed array (8 MB of floats).
ROW_ELEMENTS = 1 << 20
# Characters of strings joined into one piece before hashing (the join is a copy).
JOINED_CHARACTERS = 4 << 20

_SCALARS = frozenset({type(None), bool, int, float, complex, str, bytes})
# Scalars of one fixed size each, so a homogeneous run of them is sized by a product.
_FIXED_SIZES = {float: sys.getsizeof(0.0), bool: sys.getsizeof(True), type(None): sys.getsizeof(None)}
# Scalars that pack into a typed array: a homogeneous run of them is hashed in one step.
_PACKED = {float: "<f8", int: "<i8", bool: "|b1"}


def approximate_size(value: Any, limit: int | None = None) -> int:
    """An estimate of the bytes a value holds, counting what containers hold (a list's
    floats, a DataFrame's strings), without copying or serialising it.

    With a ``limit`` the walk stops as soon as the estimate passes it (and returns a number
    above it), so a huge nested list costs no more than a small one."""
    total = 0
    for size in _sizes(value, limit):
        total += size
        if limit is not None and total > limit:
            break
    return total


def summary(value: Any, reason: str, provenance: dict[str, Any]) -> dict[str, Any]:
    """Type, shape, dtype, size and a content digest: what identifies a large value
    (schema ``urn:pypads:schema:value-summary:1``)."""
    described: dict[str, Any] = {"schema": VALUE_SUMMARY, "provenance": provenance, "summary_of": reason,
                                 "type": _type_name(value)}
    for attribute in ("shape", "dtype"):
        if hasattr(value, attribute):
            shown = getattr(value, attribute)
            described[attribute] = list(shown) if isinstance(shown, tuple) else str(shown)
    digest, walked, sampled = _digest(value)
    # A list's size comes from the digest's own walk: walking it twice would double the cost.
    described["approximate_bytes"] = walked if walked is not None else approximate_size(value)
    if digest:
        described["blake3"] = digest
        if sampled:
            described["digest_of"] = "sample"
    return described


def content_digest(value: Any) -> str | None:
    """The BLAKE3 hash of a value's content, computed without copying it; None for a
    value holding objects it cannot hash (sets, arbitrary class instances). A value over
    ``sampling.SAMPLE_ABOVE`` bytes (64 MB) is hashed from a sample of it (its kind,
    shape, dtypes and evenly spaced windows of its contents, see :mod:`.sampling`).

    - A numeric array: the hash of the ``.npy`` file ``np.save`` would write for it
      (``b3sum`` of that file), so it names the same object as call recording does. The
      file holds the array's memory in its own order, so a Fortran-ordered array and a
      C-ordered copy of it hash differently; a strided view hashes as its C-ordered copy.
    - ``bytes``: the hash of the bytes.
    - Anything else (DataFrames, Series, sparse matrices, lists, tuples, dicts, scalars,
      object arrays): the hash of a tagged encoding of its kind, shape, dtypes and
      values, column by column for a DataFrame, component by component (``data``,
      ``indices``, ``indptr``…) for a sparse matrix. Equal content of the same types and
      layout gives the same hash in any process; a list and a tuple differ.
    """
    return _digest(value)[0]


def _digest(value: Any) -> tuple[str | None, int | None, bool]:
    """The content digest (of a sample, for a value over ``sampling.SAMPLE_ABOVE``),
    the bytes the value holds where a walk counted or estimated them (None where none
    was needed), and whether the digest is of a sample."""
    if isinstance(value, np.ndarray) and not _holds_objects(value):
        if value.nbytes > sampling.SAMPLE_ABOVE:
            return _sample_digest(value, value.nbytes) or npy.digest(value), None, True
        return npy.digest(value), None, False
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _bytes_digest(value), None, False
    # A long list's size is estimated from its sample: walking 64 MB of it would cost
    # a good part of what sampling saves. Anything else: a walk that stops at the bound.
    estimated = _extrapolated_size(value)
    size = estimated if estimated is not None else approximate_size(value, sampling.SAMPLE_ABOVE)
    if size > sampling.SAMPLE_ABOVE:
        digest = _sample_digest(value, size)
        if digest is not None:
            return digest, estimated, True
    encoder = _Encoder()
    try:
        encoder.add(value)
    except _Undigestable:
        return None, None, False
    return encoder.hash.hexdigest(), encoder.size, False


def _sample_digest(value: Any, size: int) -> str | None:
    stand_in = sampling.sample(value, size)
    if stand_in is None:
        return None
    encoder = _Encoder()
    try:  # tagged: a sample's digest is never that of a whole value
        encoder.add(("pypads-sample:1", stand_in))
    except _Undigestable:
        return None
    return encoder.hash.hexdigest()


def _extrapolated_size(value: Any) -> int | None:
    """A long list's (or tuple's) size from its sampled elements'; None for anything else."""
    if not isinstance(value, (list, tuple)) or len(value) <= sampling.WINDOWS * sampling.WINDOW_ITEMS:
        return None
    picked = sampling.picked(value)
    inside = approximate_size(picked) - sys.getsizeof(picked)  # one walk: rows of a table are sized in runs
    return sys.getsizeof(value) + len(value) * inside // len(picked)


def _bytes_digest(value: bytes | bytearray | memoryview) -> str | None:
    try:
        return blake3(memoryview(value).cast("B"), max_threads=blake3.AUTO).hexdigest()
    except (BufferError, TypeError):  # a view of strided memory
        return None


def serialize(
    value: Any, fmt: WriteFormats, max_bytes: int, origin: Callable[[], dict[str, Any]]
) -> tuple[str, bytes]:
    """The file extension and content that stand for ``value`` in an artifact.

    ``origin`` gives the provenance of a summary; it is only called when one is written,
    so the common case of a small value pays nothing for it. The size bound is checked
    before any text or pickle is built."""
    if approximate_size(value, limit=max_bytes) > max_bytes:
        return "summary.json", _json(summary(value, f"larger than max_bytes={max_bytes}", origin()))
    if fmt is WriteFormats.pickle:
        try:
            data = cloudpickle.dumps(value)
        except Exception as error:  # locks, generators, open files…
            return "summary.json", _json({**summary(value, "not picklable", origin()), "error": repr(error)})
        if len(data) > max_bytes:
            return "summary.json", _json(summary(value, f"pickle larger than max_bytes={max_bytes}", origin()))
        return "pickle", data
    text = _text(value)
    if len(text) > max_bytes:
        return "summary.json", _json(summary(value, f"text larger than max_bytes={max_bytes}", origin()))
    return "txt", text.encode("utf-8")


# Sizes: a walk that yields the bytes of each part of a value as it meets it.

def _sizes(value: Any, limit: int | None) -> Iterator[int]:
    """The sizes of ``value``'s parts, depth first; containers are walked without
    recursion, and a container met again inside itself is counted once."""
    stack: list[tuple[Iterator[Any], int | None]] = [(iter((value,)), None)]
    inside: set[int] = set()  # the containers being walked: a cycle ends here
    while stack:
        children, owner = stack[-1]
        child = next(children, _END)
        if child is _END:
            stack.pop()
            inside.discard(owner)  # type: ignore[arg-type]
            continue
        if isinstance(child, _Run):
            yield _run_size(child, stack)
            continue
        own, parts = _own_size(child, limit)
        yield own
        if parts is not None and id(child) not in inside:
            inside.add(id(child))
            stack.append((parts, id(child)))


def _own_size(value: Any, limit: int | None) -> tuple[int, Iterator[Any] | None]:
    """The bytes of ``value`` itself, and its parts when they are walked on their own."""
    kind = type(value)
    if kind in _SCALARS:
        return sys.getsizeof(value), None
    # Short runs: a bounded walk stops within a thousand rows of its limit.
    if kind in (list, tuple, set, frozenset):
        return sys.getsizeof(value), _runs(value, SIZE_SLICE)
    if kind is dict:
        return sys.getsizeof(value), _runs(chain.from_iterable(value.items()), SIZE_SLICE)
    if isinstance(value, np.ndarray):
        return value.nbytes, (_runs(value.flat, SIZE_SLICE) if _holds_objects(value) else None)
    pandas_size = _pandas_size(value, limit)
    if pandas_size is not None:
        return pandas_size, None
    sparse = _sparse_parts(value)
    if sparse is not None:
        return sum(part.nbytes for _, part in sparse), None
    nbytes = getattr(value, "nbytes", None)
    return (nbytes if isinstance(nbytes, int) else sys.getsizeof(value)), None


class _Run(list):  # type: ignore[type-arg]
    """Consecutive elements of a sequence (at most ``SLICE``), taken together."""


def _runs(values: Iterable[Any], length: int = SLICE) -> Iterator[_Run]:
    remaining = iter(values)
    while run := _Run(islice(remaining, length)):
        yield run


def _object_runs(values: np.ndarray) -> Iterator[_Run]:
    return _runs(values.flat)  # in C order, without a copy


def _run_size(run: _Run, stack: list[tuple[Iterator[Any], int | None]]) -> int:
    """The bytes of a run's scalars (containers among them are walked on their own)."""
    kinds = set(map(type, run))
    if len(kinds) == 1 and (kind := next(iter(kinds))) in _FIXED_SIZES:
        return len(run) * _FIXED_SIZES[kind]
    if kinds <= _SCALARS:
        return sum(map(sys.getsizeof, run))
    if kinds <= {list, tuple}:  # rows: a table as a list of lists
        inner = set(map(type, chain.from_iterable(run)))
        if inner <= _SCALARS:
            rows = sum(map(sys.getsizeof, run))
            if len(inner) == 1 and (kind := next(iter(inner))) in _FIXED_SIZES:
                return rows + sum(map(len, run)) * _FIXED_SIZES[kind]
            return rows + sum(map(sys.getsizeof, chain.from_iterable(run)))
    stack.append((iter(list(run)), None))
    return 0


def _pandas_size(value: Any, limit: int | None = None) -> int | None:
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


# Digests: a tagged encoding of a value, hashed as it is produced.

class _Undigestable(Exception):
    """The value holds something the encoding does not cover."""


_END = object()
_FLOAT = struct.Struct("<d")
_COMPLEX = struct.Struct("<dd")
_LENGTH = struct.Struct("<q")


class _Encoder:
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
            part = next(parts, _END)
            if part is _END:
                self._stack.pop()
                self._inside.discard(owner)  # type: ignore[arg-type]
                if self._sized_at == len(self._stack):
                    self._sized_at = None
            elif isinstance(part, _Rows):
                self._rows(part)
            elif isinstance(part, _Run):
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
        if kind in _SCALARS or isinstance(value, (np.generic, int, float, str, bytes)):
            self._count(sys.getsizeof(value))
            self._put(_scalar_bytes(value))
        elif kind in (list, tuple):
            self._count(sys.getsizeof(value))
            self._put(b"[" if kind is list else b"(", _LENGTH.pack(len(value)))
            self._walk(value, _runs(value))
        elif kind is dict:
            self._count(sys.getsizeof(value))
            self._put(b"{", _LENGTH.pack(len(value)))
            self._walk(value, _runs(chain.from_iterable(value.items())))
        elif isinstance(value, np.ndarray):
            self._count(value.nbytes)
            self._array(value)
        elif not (self._pandas(value) or self._sparse(value)):
            raise _Undigestable(_type_name(value))

    def _run(self, run: _Run) -> None:
        """Up to ``SLICE`` elements: one typed array when they are all floats, ints or
        bools, groups of rows when they are rows (a table as a list of lists), else
        one by one."""
        kinds = set(map(type, run))
        if kinds <= _SCALARS:
            if self._counting:
                self.size += sum(map(sys.getsizeof, run))
            self._scalars(run, kinds)
            return
        if len(kinds) == 1 and (kind := next(iter(kinds))) in (list, tuple):
            lengths = array("q", map(len, run))
            if max(lengths) <= ROW_ELEMENTS:
                self._stack.append((_row_groups(run, lengths), None))
                return
        self._stack.append((iter(list(run)), None))

    def _scalars(self, values: list[Any], kinds: set[type]) -> None:
        """Scalars: one typed array when they are of one packable kind, else each one's
        tagged bytes."""
        if len(kinds) == 1 and (kind := next(iter(kinds))) in _PACKED:
            try:
                packed = np.fromiter(values, _PACKED[kind], len(values))
            except OverflowError:  # an int beyond 64 bits
                pass
            else:
                self._put(b"p", _PACKED[kind].encode("ascii"), _LENGTH.pack(len(packed)), packed)
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
        if len(set(map(len, rows))) == 1 and rows[0] and set(map(type, rows[0])) <= _SCALARS:
            try:
                table = np.array(rows)
            except (ValueError, OverflowError):  # ragged deeper down
                table = None
            if table is not None and table.ndim == 2 and table.dtype.kind in "biuf":
                self._count(table.size * _FIXED_SIZES[float])
                self._put(tag, table.dtype.str.encode("ascii"), _LENGTH.pack(table.shape[0]),
                          _LENGTH.pack(table.shape[1]), table)
                return
        kinds = set(map(type, chain.from_iterable(rows)))
        if kinds <= _SCALARS:
            values = list(chain.from_iterable(rows))
            if self._counting:
                self.size += sum(map(sys.getsizeof, values))
            self._put(tag, _LENGTH.pack(len(rows)), array("q", map(len, rows)))
            self._scalars(values, kinds)
            return
        self._stack.append((iter(list(rows)), None))

    def _array(self, values: np.ndarray) -> None:
        shape = _LENGTH.pack(values.ndim) + b"".join(_LENGTH.pack(length) for length in values.shape)
        if _holds_objects(values):
            self._put(b"O", shape)
            self._walk(values, _object_runs(values))
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
            parts = chain((value.name,), _column_values(value))
        else:
            return False
        if self._sized_at is None:  # pandas sizes itself, strings included
            self.size += _pandas_size(value) or 0
            self._sized_at = len(self._stack)
        self._put(*header)
        self._walk(value, parts)
        return True

    def _sparse(self, value: Any) -> bool:
        parts = _sparse_parts(value)
        if parts is None:
            return False
        self._count(sum(part.nbytes for _, part in parts))
        self._put(b"X", value.format.encode("ascii"), _LENGTH.pack(len(value.shape)),
                  *(_LENGTH.pack(length) for length in value.shape))
        for name, part in parts:
            self._put(_scalar_bytes(name))
            self._array(part)
        return True


class _Rows(list):  # type: ignore[type-arg]
    """Consecutive rows of a table, at most ``ROW_ELEMENTS`` values in all (or one row)."""


def _row_groups(run: _Run, lengths: array[int]) -> Iterator[_Rows]:
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
    raise _Undigestable(_type_name(value))


def _column_values(column: Any) -> Iterator[Any]:
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


def _sparse_parts(value: Any) -> list[tuple[str, np.ndarray]] | None:
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


def _holds_objects(values: np.ndarray) -> bool:
    """Whether numpy cannot write the array's memory as a ``.npy`` file (Python objects,
    variable-width strings)."""
    return values.dtype.hasobject or not getattr(type(values.dtype), "_legacy", True)


# Text.

# Dtypes whose values Python's own repr writes exactly and quickly (int, bool, float64).
_PLAIN_KINDS = {"b", "i", "u"}


def _text(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return _array_text(value)
    try:
        return repr(value)
    except Exception as error:  # a broken __repr__ must not lose the record
        return f"<{_type_name(value)}: repr failed: {error!r}>"


def _array_text(array: np.ndarray) -> str:
    """Every value, exactly, one row per line. Numbers and 1- or 2-d arrays of them
    take Python's repr of the nested lists: 15 times faster than ``np.array2string``
    for iris, and it keeps all digits where ``array2string`` rounds to 8."""
    plain = array.dtype.kind in _PLAIN_KINDS or array.dtype == np.float64
    if plain and array.ndim <= 1:
        return repr(array.tolist())
    if plain and array.ndim == 2:
        return "[" + ",\n ".join(map(repr, array.tolist())) + "]"
    return np.array2string(array, threshold=sys.maxsize, max_line_width=200)


def _type_name(value: Any) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


def _json(document: dict[str, Any]) -> bytes:
    return json.dumps(document, indent=2, default=str).encode("utf-8")
