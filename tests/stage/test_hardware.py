"""The Ram logger's readings in a forked child: the child's, not its parent's."""

import os

import numpy as np
import psutil

from pypads.recording.loggers import hardware
from pypads.recording.loggers.hardware import resident_bytes


def test_a_forked_child_reads_its_own_memory():
    resident_bytes()  # the parent's file is open before the fork
    parents = hardware._STATM._opened[1]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: 200 MB more than its parent, and says what it reads
        try:
            os.close(read)
            try:
                os.fstat(parents)
                inherited = "kept"
            except OSError:
                inherited = "closed"
            before = resident_bytes()
            held = np.ones(25_000_000)  # 200 MB, every page touched
            os.write(write, f"{before} {resident_bytes()} {psutil.Process().memory_info().rss} {held[-1]} {inherited}".encode())
        finally:
            os._exit(0)  # never back into the test runner
    os.close(write)
    with os.fdopen(read) as pipe:
        before, ours, psutils, _, inherited = pipe.read().split()
    assert inherited == "closed"  # the parent's descriptor, closed in the child at its fork
    os.waitpid(pid, 0)
    assert abs(int(ours) - int(psutils)) < 2 * 1024 * 1024
    assert int(ours) - int(before) > 150 * 1024 * 1024  # its own growth: the parent's figure did not move
