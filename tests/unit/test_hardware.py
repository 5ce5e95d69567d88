"""The Ram logger's readings: psutil's figures, at a fraction of their cost."""

import psutil

from pypads.recording.loggers.hardware import memory_in_use, resident_bytes


def test_the_readings_are_psutils():
    assert abs(resident_bytes() - psutil.Process().memory_info().rss) < 2 * 1024 * 1024
    assert abs(memory_in_use() - psutil.virtual_memory().percent) < 1.0

