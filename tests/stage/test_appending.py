"""The journal's entity lines, appended through a memory map: read back whole while the
writer runs, after it closed, after it was killed, and never half-copied."""

from __future__ import annotations

import io
import mmap
import os
import signal
import subprocess
import sys
from pathlib import Path

from pypads.to_mlflow.journal.appending import LARGEST_WINDOW, MappedAppender, PlainAppender, complete_lines, open_appender


def lines_of(path: Path) -> list[bytes]:
    with open(path, "rb") as stream:
        return list(complete_lines(stream))


def test_lines_are_readable_while_written_and_the_file_is_cut_to_them_at_close(tmp_path):
    path = tmp_path / "entities.jsonl"
    appender = open_appender(path, 0o600)
    assert isinstance(appender, MappedAppender)
    written = [f'{{"step": {step}, "pad": "{"x" * (step % 300)}"}}\n'.encode() for step in range(2000)]
    for line in written:  # about 300 kB: the file grows past its first windows
        appender.append(line)
    assert lines_of(path) == written  # another reader sees them before any close
    assert path.stat().st_size > sum(map(len, written))  # room taken ahead, zeros
    appender.close()
    assert path.read_bytes() == b"".join(written)
    again = open_appender(path, 0o600)  # appending goes on after the last line
    again.append(b'{"last": true}\n')
    again.close()
    assert lines_of(path) == [*written, b'{"last": true}\n']


def test_only_the_tail_is_mapped_so_a_long_run_holds_no_more_memory(tmp_path):
    path = tmp_path / "entities.jsonl"
    appender = open_appender(path, 0o600)
    line = b'{"kind": "metric", "key": "loss", "value": 0.125, "timestamp": 1700000000000, "step": 1}\n'
    for _ in range(100_000):  # 9 MB of lines
        appender.append(line)

    def mapped_bytes() -> int:
        total = 0
        for entry in Path("/proc/self/maps").read_text().splitlines():
            if entry.endswith(str(path)):
                start, end = entry.split()[0].split("-")
                total += int(end, 16) - int(start, 16)
        return total

    assert 0 < mapped_bytes() <= LARGEST_WINDOW + mmap.ALLOCATIONGRANULARITY
    appender.close()
    assert mapped_bytes() == 0
    assert path.stat().st_size == 100_000 * len(line) and lines_of(path)[-1] == line


def test_a_killed_writer_loses_no_line_and_the_next_one_continues_after_them(tmp_path):
    path = tmp_path / "entities.jsonl"
    script = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from pypads.to_mlflow.journal.appending import open_appender\n"
        "appender = open_appender(Path(sys.argv[1]), 0o600)\n"
        "for step in range(5000):\n"
        "    appender.append(b'{\"step\": %d}\\n' % step)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    killed = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True)
    assert killed.returncode == -signal.SIGKILL
    assert path.read_bytes().endswith(b"\0")  # never cut: the zeros of its last window are there
    assert lines_of(path) == [b'{"step": %d}\n' % step for step in range(5000)]
    appender = open_appender(path, 0o600)
    appender.append(b'{"recovered": true}\n')
    appender.close()
    assert lines_of(path)[-2:] == [b'{"step": 4999}\n', b'{"recovered": true}\n']


def test_a_line_seen_half_copied_is_not_read_nor_anything_after_it():
    # A reader in the middle of a copy may see its end before its start: zeros in between.
    content = b'{"a": 1}\n{"b": 2}\n{"c": \0\0\0 3}\n{"d": 4}\n' + bytes(100)
    assert list(complete_lines(io.BytesIO(content))) == [b'{"a": 1}\n', b'{"b": 2}\n']
    assert list(complete_lines(io.BytesIO(b'{"a": 1}\n{"b": 2'))) == [b'{"a": 1}\n']  # no newline yet
    long_line = b'{"long": "' + b"y" * (200 << 10) + b'"}\n'  # longer than a read block
    assert list(complete_lines(io.BytesIO(long_line + bytes(10)))) == [long_line]


def test_a_forked_child_never_writes_over_its_parent_lines(tmp_path):
    path = tmp_path / "entities.jsonl"
    appender = open_appender(path, 0o600)
    appender.append(b'{"parent": 1}\n')
    child = os.fork()
    if child == 0:  # the child's appends are dropped: it tracks nothing
        try:
            # Longer than the parent's next line: written over, its tail would show.
            appender.append(b'{"child": 1, "padding": "' + b"x" * 40 + b'"}\n')
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    appender.append(b'{"parent": 2}\n')
    assert lines_of(path) == [b'{"parent": 1}\n', b'{"parent": 2}\n']  # read before close cuts the file
    appender.close()


def test_the_plain_appender_writes_the_same_lines(tmp_path):
    path = tmp_path / "entities.jsonl"
    appender = PlainAppender(path, 0o600)
    for step in range(3):
        appender.append(b'{"step": %d}\n' % step)
    appender.close()
    assert path.read_bytes() == b'{"step": 0}\n{"step": 1}\n{"step": 2}\n'
