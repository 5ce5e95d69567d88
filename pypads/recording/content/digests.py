"""Content digests: the BLAKE3 hash of a value's content, without copying it, whole up
to 64 MB and of a sample above (see :mod:`pypads.recording.content.sampling`)."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from blake3 import blake3

from pypads.recording.content import npy, sampling
from pypads.recording.content.encoding import DigestEncoder, Undigestable
from pypads.recording.content.sizes import approximate_size, holds_objects


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
    return digest_and_size(value)[0]


def digest_and_size(value: Any) -> tuple[str | None, int | None, bool]:
    """The content digest (of a sample, for a value over ``sampling.SAMPLE_ABOVE``),
    the bytes the value holds where a walk counted or estimated them (None where none
    was needed), and whether the digest is of a sample."""
    if isinstance(value, np.ndarray) and not holds_objects(value):
        if value.nbytes > sampling.SAMPLE_ABOVE:
            return sample_digest(value, value.nbytes) or npy.digest(value), None, True
        return npy.digest(value), None, False
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes_digest(value), None, False
    # A long list's size is estimated from its sample: walking 64 MB of it would cost
    # a good part of what sampling saves. Anything else: a walk that stops at the bound.
    estimated = extrapolated_size(value)
    size = estimated if estimated is not None else approximate_size(value, sampling.SAMPLE_ABOVE)
    if size > sampling.SAMPLE_ABOVE:
        digest = sample_digest(value, size)
        if digest is not None:
            return digest, estimated, True
    encoder = DigestEncoder()
    try:
        encoder.add(value)
    except Undigestable:
        return None, None, False
    return encoder.hash.hexdigest(), encoder.size, False


def sample_digest(value: Any, size: int) -> str | None:
    stand_in = sampling.sample(value, size)
    if stand_in is None:
        return None
    encoder = DigestEncoder()
    try:  # tagged: a sample's digest is never that of a whole value
        encoder.add(("pypads-sample:1", stand_in))
    except Undigestable:
        return None
    return encoder.hash.hexdigest()


def extrapolated_size(value: Any) -> int | None:
    """A long list's (or tuple's) size from its sampled elements'; None for anything else."""
    if not isinstance(value, (list, tuple)) or len(value) <= sampling.WINDOWS * sampling.WINDOW_ITEMS:
        return None
    picked = sampling.picked(value)
    inside = approximate_size(picked) - sys.getsizeof(picked)  # one walk: rows of a table are sized in runs
    return sys.getsizeof(value) + len(value) * inside // len(picked)


def bytes_digest(value: bytes | bytearray | memoryview) -> str | None:
    try:
        return blake3(memoryview(value).cast("B"), max_threads=blake3.AUTO).hexdigest()
    except (BufferError, TypeError):  # a view of strided memory
        return None
