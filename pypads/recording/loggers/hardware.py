"""Cpu, Ram and Disk: what a tracked call cost the machine.

Their metrics are named ``system/…``: MLflow's UI shows that namespace in a run's
*System metrics* tab, apart from the model's metrics."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Mapping
from typing import Any, NamedTuple

import psutil

from pypads.core import Logger
from pypads.run import TrackedCall

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


class _ProcFile:
    """A file of ``/proc`` kept open and read with one ``pread``: psutil opens and parses
    ``/proc/self/statm`` and ``/proc/meminfo`` whole on every reading (17 and 48 µs here),
    and the Ram logger reads them on every tracked fit. Opened again in a forked child,
    whose ``/proc/self`` is another file. None where there is no such file (not Linux)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._opened: tuple[int, int] | None = None  # (the pid that opened it, its descriptor)

    def head(self, size: int) -> bytes | None:
        opened = self._opened
        if opened is None or opened[0] != os.getpid():
            try:
                descriptor = os.open(self.path, os.O_RDONLY)  # not inherited by exec
            except OSError:
                return None
            current = self._opened
            if current is not None and current[0] == os.getpid():  # another thread opened it meanwhile
                os.close(descriptor)
                opened = current
            else:
                opened = self._opened = (os.getpid(), descriptor)
        try:
            return os.pread(opened[1], size, 0)
        except OSError:
            return None

    def forget(self) -> None:
        """In a forked child, at once: close the parent's descriptor, which this child
        holds a copy of (later the number could be another file of the child's)."""
        opened, self._opened = self._opened, None
        if opened is not None:
            try:
                os.close(opened[1])
            except OSError:
                pass


_STATM = _ProcFile("/proc/self/statm")
_MEMINFO = _ProcFile("/proc/meminfo")


def _forget_in_child() -> None:
    _STATM.forget()
    _MEMINFO.forget()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes() -> int:
    """This process' resident memory, as psutil's ``memory_info().rss`` says it."""
    fields = (_STATM.head(128) or b"").split()
    if len(fields) > 1 and fields[1].isdigit():
        return int(fields[1]) * _PAGE
    return int(_process().memory_info().rss)


def memory_in_use() -> float:
    """System memory in use in percent, as psutil's ``virtual_memory().percent`` says it:
    (total - available) / total, from ``MemTotal`` and ``MemAvailable``, the first and
    third lines of ``/proc/meminfo``."""
    lines = (_MEMINFO.head(160) or b"").split(b"\n", 3)
    if len(lines) > 2 and lines[0].startswith(b"MemTotal:") and lines[2].startswith(b"MemAvailable:"):
        total, available = lines[0].split()[1:2], lines[2].split()[1:2]
        # psutil's own rules where MemAvailable is 0 (a kernel's fault) or above the total
        # (some containers): it reads the file whole then, and so is left to it.
        if total and available and total[0].isdigit() and available[0].isdigit() and 0 < int(available[0]) <= int(total[0]):
            return round(100.0 * (int(total[0]) - int(available[0])) / int(total[0]), 1)
    return float(psutil.virtual_memory().percent)


def asks_for_workers(call: TrackedCall) -> bool:
    """Whether the call may run in worker processes: an estimator's or a function's
    ``n_jobs`` other than None and 1 (joblib's loky workers are processes)."""
    n_jobs = call.kwargs.get("n_jobs", getattr(call.instance, "n_jobs", None))
    return isinstance(n_jobs, int) and not isinstance(n_jobs, bool) and n_jobs != 1


def _workers() -> list[psutil.Process]:
    """This process' children (and theirs) in its session: joblib's workers, not the
    uploader, which runs in a session of its own. Listing them reads every process of the
    machine (6 ms here), so it is done only for calls that ask for workers."""
    session = os.getsid(0)
    found = []
    for child in _process().children(recursive=True):
        try:
            if os.getsid(child.pid) == session:
                found.append(child)
        except OSError:  # gone already
            pass
    return found


def _cpu_of(processes: list[psutil.Process]) -> dict[int, float]:
    """CPU seconds (user and system) each of ``processes`` has used so far, by pid."""
    used = {}
    for process in processes:
        try:
            times = process.cpu_times()
        except psutil.Error:  # gone already: its time is counted once it is waited for
            continue
        used[process.pid] = times.user + times.system
    return used


def _reaped_cpu() -> float:
    """CPU seconds of the children this process has waited for (they are gone)."""
    times = os.times()
    return times.children_user + times.children_system


class WorkerClock(NamedTuple):
    """What the workers had used when a call began."""

    per_worker: dict[int, float]
    reaped: float

    @classmethod
    def now(cls) -> WorkerClock:
        return cls(_cpu_of(_workers()), _reaped_cpu())

    def used_since(self) -> float:
        """CPU seconds the workers used since this reading. joblib's loky workers
        outlive a call and serve the next one: a worker alive at both ends counts its
        difference, one started during the call all of its time, and one that ended
        during it the time its parent collected for it (less what it had used before)."""
        now = _cpu_of(_workers())
        used = sum(seconds - self.per_worker.get(pid, 0.0) for pid, seconds in now.items())
        before_of_gone = sum(seconds for pid, seconds in self.per_worker.items() if pid not in now)
        return max(0.0, used) + max(0.0, _reaped_cpu() - self.reaped - before_of_gone)


class Cpu(Logger):
    """Metrics ``system/<call>.seconds`` (the call's wall time), ``system/<call>.cpu_seconds``
    (CPU time used for the call: the process' own, all its threads, and for a call with
    ``n_jobs`` other than None or 1 its worker processes' too) and
    ``system/<call>.cpu_percent`` (that time over the wall time, as psutil counts it: at
    most 100 × the number of cores), step = the call's number from 0 (a function fitted
    once has its figures at step 0).

    The process' CPU time comes from the process clock (``time.process_time``,
    nanoseconds on Linux), not psutil's clock ticks (10 ms), which made a short fit read
    0 % or thousands of percent. A call too short for the clock to measure (under 100 of
    its ticks) gets no percent: its ``seconds`` say how short it was.

    Workers: a search with ``n_jobs=2`` fits its candidates in joblib's worker processes,
    whose time the process clock does not see (it read 0.07 s of CPU for 24 s of
    fitting). For such a call the workers' CPU time is measured too (psutil, 10 ms
    ticks), as what they used between the call's start and end."""

    def pre(self, call: TrackedCall, options: Mapping[str, Any]) -> tuple[float, float, WorkerClock | None]:
        workers = WorkerClock.now() if asks_for_workers(call) else None
        return time.process_time(), time.perf_counter(), workers

    def post(self, call: TrackedCall, before: tuple[float, float, WorkerClock | None], options: Mapping[str, Any]) -> None:
        used = max(0.0, time.process_time() - before[0])
        if before[2] is not None:
            used += before[2].used_since()
        # The window CPU time was measured over (it holds other loggers' phases too, so
        # the percent is taken over it, not over the original's duration alone).
        window = time.perf_counter() - before[1]
        metrics = {f"{SYSTEM}{call.name}.seconds": call.duration or 0.0, f"{SYSTEM}{call.name}.cpu_seconds": used}
        if window >= _SHORTEST:
            metrics[f"{SYSTEM}{call.name}.cpu_percent"] = min(100.0 * used / window, _MOST_PERCENT)
        call.run.writer.log_metrics(metrics, step=call.number - 1)


class Ram(Logger):
    """Metrics ``system/<call>.rss_mb`` (resident memory after the call: the process',
    and for a call with ``n_jobs`` other than None or 1 its worker processes' too),
    ``system/<call>.rss_delta_mb`` (its change over the call) and
    ``system/<call>.ram_percent`` (system memory in use)."""

    def pre(self, call: TrackedCall, options: Mapping[str, Any]) -> int:
        return _resident(asks_for_workers(call))

    def post(self, call: TrackedCall, before: int, options: Mapping[str, Any]) -> None:
        rss = _resident(asks_for_workers(call))
        call.run.writer.log_metrics(
            {
                f"{SYSTEM}{call.name}.rss_mb": rss / _MB,
                f"{SYSTEM}{call.name}.rss_delta_mb": (rss - before) / _MB,
                f"{SYSTEM}{call.name}.ram_percent": memory_in_use(),
            },
            step=call.number - 1,
        )


def _resident(with_workers: bool) -> int:
    """Resident bytes of this process, and of its workers if asked."""
    rss = resident_bytes()
    if with_workers:
        for worker in _workers():
            try:
                rss += worker.memory_info().rss
            except psutil.Error:  # gone already
                pass
    return rss


class Disk(Logger):
    """Metric ``system/<call>.disk_percent``: how full the working directory's disk is after the call."""

    def post(self, call: TrackedCall, before: None, options: Mapping[str, Any]) -> None:
        call.run.writer.log_metrics(
            {f"{SYSTEM}{call.name}.disk_percent": psutil.disk_usage(os.getcwd()).percent}, step=call.number - 1
        )
