"""Cpu, Ram and Disk: what a tracked call cost the machine, measured with psutil."""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from typing import Any

import psutil

from pypads.calls import Call
from pypads.loggers.base import Logger

_MB = 1024 * 1024


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
    """Metrics ``<call>.cpu_seconds`` (CPU time of the process during the call) and
    ``<call>.cpu_percent`` (that time over the wall time), step = the call number."""

    def pre(self, call: Call, options: Mapping[str, Any]) -> float:
        times = _process().cpu_times()
        return times.user + times.system

    def post(self, call: Call, before: float, options: Mapping[str, Any]) -> None:
        times = _process().cpu_times()
        used = times.user + times.system - before
        metrics = {f"{call.name}.cpu_seconds": used}
        if call.duration:
            metrics[f"{call.name}.cpu_percent"] = 100.0 * used / call.duration
        call.run.writer.log_metrics(metrics, step=call.number)


class Ram(Logger):
    """Metrics ``<call>.rss_mb`` (the process' resident memory after the call),
    ``<call>.rss_delta_mb`` and ``<call>.ram_percent`` (system memory in use)."""

    def pre(self, call: Call, options: Mapping[str, Any]) -> int:
        return _process().memory_info().rss

    def post(self, call: Call, before: int, options: Mapping[str, Any]) -> None:
        rss = _process().memory_info().rss
        call.run.writer.log_metrics(
            {
                f"{call.name}.rss_mb": rss / _MB,
                f"{call.name}.rss_delta_mb": (rss - before) / _MB,
                f"{call.name}.ram_percent": psutil.virtual_memory().percent,
            },
            step=call.number,
        )


class Disk(Logger):
    """Metric ``<call>.disk_percent``: how full the working directory's disk is after the call."""

    def post(self, call: Call, before: None, options: Mapping[str, Any]) -> None:
        call.run.writer.log_metrics(
            {f"{call.name}.disk_percent": psutil.disk_usage(os.getcwd()).percent}, step=call.number
        )
