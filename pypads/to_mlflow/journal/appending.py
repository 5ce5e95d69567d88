"""Appending the journal's entity lines without a system call per line.

A scoring function called in a loop appends one line per call. ``os.write`` takes about
a microsecond itself, but on a virtualised host every system call also slows the code
around it (caches and predictors flushed on the way in and out): measured beside a
0.37 ms ``accuracy_score``, one 100-byte ``os.write`` per call added 7–10 µs to it, a
copy into a memory map 1–2 µs (``benchmarks/run.py --only hot_metrics`` shows the
effect on the whole call).

So the entity file is a shared memory map. An append is a copy into the page cache:
the uploader reads it as it reads any file, and it outlives the process as a written
one does (a SIGKILL loses nothing). The file is grown ahead, a window at a time, with
``posix_fallocate``, which takes real blocks: a store into a mapped page the disk has no
room for would raise SIGBUS in the script, where a full disk must only stop tracking.
Running out of room is instead an ``OSError`` when a window is taken, handled as a
failed ``write`` is.

Only the file's tail is mapped, a window of at most ``LARGEST_WINDOW``: a mapping's pages
count in the process' memory, and a long run's lines must not. Past the last line the
file holds zeros until :meth:`MappedAppender.close` cuts them off; readers take the
first NUL byte for the end (:func:`complete_lines`), and never take a line with a NUL
in it (JSON escapes it), which is how a line copied half-way (seen by the reader in the
middle of the copy, or cut by a crash) looks.

Where memory maps or ``posix_fallocate`` are missing, :class:`PlainAppender` writes.
"""

from __future__ import annotations

import errno
import mmap
import os
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Protocol

FIRST_WINDOW = 64 << 10
# Only the file's tail is mapped: pages of a mapping count in the process' memory, so a
# days-long metric loop holds at most this much of its lines, as with write().
LARGEST_WINDOW = 1 << 20
_READ_BLOCK = 64 << 10


class Appender(Protocol):
    """Appends bytes to one file, kept open until :meth:`close`."""

    def append(self, data: bytes) -> None: ...

    def close(self) -> None: ...


def open_appender(path: Path, mode: int) -> Appender:
    """A :class:`MappedAppender` where the system has what it needs, else a
    :class:`PlainAppender`."""
    if hasattr(os, "posix_fallocate"):
        try:
            return MappedAppender(path, mode)
        except OSError as error:
            if error.errno not in _UNSUPPORTED:
                raise
    return PlainAppender(path, mode)


# A filesystem that cannot reserve blocks or map files (some network and FUSE ones).
_UNSUPPORTED = frozenset({errno.EINVAL, errno.EOPNOTSUPP, errno.ENOSYS, errno.ENODEV})


class PlainAppender:
    """One ``write`` per append, to a file opened with ``O_APPEND``."""

    def __init__(self, path: Path, mode: int) -> None:
        self._descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode)

    def append(self, data: bytes) -> None:
        written = os.write(self._descriptor, data)
        if written < len(data):  # a signal can cut a write short: write the rest
            view = memoryview(data)[written:]
            while view:
                view = view[os.write(self._descriptor, view):]

    def close(self) -> None:
        if self._descriptor >= 0:
            os.close(self._descriptor)
            self._descriptor = -1


class MappedAppender:
    """Appends by copying into a shared memory map of the file (see the module's text)."""

    def __init__(self, path: Path, mode: int) -> None:
        self._descriptor = os.open(path, os.O_RDWR | os.O_CREAT, mode)
        try:
            self._end = _written_end(self._descriptor)
            self._map: mmap.mmap | None = None
            self._start = self._size = self._window = 0  # the mapped part of the file: [start, size)
            self._grow(0)
        except BaseException:
            os.close(self._descriptor)
            raise
        _in_this_process.add(self)

    def append(self, data: bytes) -> None:
        if self._descriptor < 0:
            return  # a forked child's copy: it tracks nothing, and must not write over the parent's lines
        end = self._end + len(data)
        if end > self._size:
            self._grow(len(data))
        assert self._map is not None
        self._map[self._end - self._start:end - self._start] = data
        self._end = end

    def close(self) -> None:
        """Unmap and cut the file at its last line."""
        if self._descriptor < 0:
            return
        if self._map is not None:
            self._map.close()
            self._map = None
        try:
            os.ftruncate(self._descriptor, self._end)
        finally:
            os.close(self._descriptor)
            self._descriptor = -1

    def _grow(self, needed: int) -> None:
        """Map the file's next window, from the last line on, with room for ``needed``
        bytes at least (the window doubles up to ``LARGEST_WINDOW``)."""
        window = max(needed, min(max(FIRST_WINDOW, 2 * self._window), LARGEST_WINDOW))
        start = self._end - self._end % mmap.ALLOCATIONGRANULARITY
        size = self._end + window
        os.posix_fallocate(self._descriptor, start, size - start)  # ENOSPC here, not SIGBUS later
        if self._map is not None:
            self._map.close()
            self._map = None
        self._map = mmap.mmap(self._descriptor, size - start, offset=start)
        self._start, self._size, self._window = start, size, window

    def forget_in_forked_child(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None
        if self._descriptor >= 0:
            os.close(self._descriptor)
        self._descriptor = -1


def _written_end(descriptor: int) -> int:
    """Where the lines end in a file that may hold zeros after them (a writer's window,
    left by a crash): the end of the last line before them."""
    size = os.fstat(descriptor).st_size
    position = size
    while position > 0:
        start = max(0, position - _READ_BLOCK)
        block = os.pread(descriptor, position - start, start)
        content = block.rstrip(b"\0")
        if content:
            return start + len(content)
        position = start
    return 0


def complete_lines(stream: BinaryIO) -> Iterator[bytes]:
    """The whole lines of ``stream`` from where it is: each ends with a newline and has
    no NUL byte; the first NUL, or a last line without its newline, ends them."""
    pending: list[bytes] = []
    while True:
        block = stream.read(_READ_BLOCK)
        if not block:
            return
        stop = block.find(b"\0")
        if stop >= 0:
            block = block[:stop]
        start = 0
        while (newline := block.find(b"\n", start)) >= 0:
            yield b"".join([*pending, block[start:newline + 1]])
            pending, start = [], newline + 1
        pending.append(block[start:])
        if stop >= 0:
            return


_in_this_process: weakref.WeakSet[MappedAppender] = weakref.WeakSet()


def _forget_maps_in_forked_child() -> None:
    for appender in list(_in_this_process):
        appender.forget_in_forked_child()


os.register_at_fork(after_in_child=_forget_maps_in_forked_child)
