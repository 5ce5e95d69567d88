"""Cpu, Ram and Disk: what a tracked call cost the machine.

Their metrics are named ``system/…``: MLflow's UI shows that namespace in a run's
*System metrics* tab, apart from the model's metrics."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Mapping
from typing import Any

import psutil

from pypads.calls import Call
from pypads.loggers.base import Logger

_MB = 1024 * 1024
SYSTEM = "system/"  # MLflow's namespace of system metrics
# A percent needs a duration of at least 100 ticks of the process clock to be within 1 %.
_SHORTEST = 100 * time.get_clock_info("process_time").resolution
_MOST_PERCENT = 100.0 * (psutil.cpu_count() or 1)


@functools.cache
def _this_process() -> psutil.Process:
    return psutil.Process(os.getpid())


def _process() -> psutil.Process:
    process = _this_process()
    if process.pid != os.getpid():  # after a fork, measure the child
        _this_process.cache_clear()
        process = _this_process()
    return process


class Cpu(Logger):
    """Metrics ``system/<call>.seconds`` (the call's wall time), ``system/<call>.cpu_seconds``
    (CPU time of the process during the call, all its threads) and
    ``system/<call>.cpu_percent`` (that time over the wall time, as psutil counts it: at
    most 100 × the number of cores), step = the call's number from 0 (a function fitted
    once has its figures at step 0).

    CPU time comes from the process clock (``time.process_time``, nanoseconds on Linux),
    not psutil's clock ticks (10 ms), which made a short fit read 0 % or thousands of
    percent. A call too short for the clock to measure (under 100 of its ticks) gets no
    percent: its ``seconds`` say how short it was."""

    def pre(self, call: Call, options: Mapping[str, Any]) -> tuple[float, float]:
        return time.process_time(), time.perf_counter()

    def post(self, call: Call, before: tuple[float, float], options: Mapping[str, Any]) -> None:
        used = max(0.0, time.process_time() - before[0])
        # The window CPU time was measured over (it holds other loggers' phases too, so
        # the percent is taken over it, not over the original's duration alone).
        window = time.perf_counter() - before[1]
        metrics = {f"{SYSTEM}{call.name}.seconds": call.duration or 0.0, f"{SYSTEM}{call.name}.cpu_seconds": used}
        if window >= _SHORTEST:
            metrics[f"{SYSTEM}{call.name}.cpu_percent"] = min(100.0 * used / window, _MOST_PERCENT)
        call.run.writer.log_metrics(metrics, step=call.number - 1)


class Ram(Logger):
    """Metrics ``system/<call>.rss_mb`` (the process' resident memory after the call),
    ``system/<call>.rss_delta_mb`` and ``system/<call>.ram_percent`` (system memory in use)."""

    def pre(self, call: Call, options: Mapping[str, Any]) -> int:
        return _process().memory_info().rss

    def post(self, call: Call, before: int, options: Mapping[str, Any]) -> None:
        rss = _process().memory_info().rss
        call.run.writer.log_metrics(
            {
                f"{SYSTEM}{call.name}.rss_mb": rss / _MB,
                f"{SYSTEM}{call.name}.rss_delta_mb": (rss - before) / _MB,
                f"{SYSTEM}{call.name}.ram_percent": psutil.virtual_memory().percent,
            },
            step=call.number - 1,
        )


class Disk(Logger):
    """Metric ``system/<call>.disk_percent``: how full the working directory's disk is after the call."""

    def post(self, call: Call, before: None, options: Mapping[str, Any]) -> None:
        call.run.writer.log_metrics(
            {f"{SYSTEM}{call.name}.disk_percent": psutil.disk_usage(os.getcwd()).percent}, step=call.number - 1
        )
