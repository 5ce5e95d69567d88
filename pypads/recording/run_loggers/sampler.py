"""HardwareSampler: the process' CPU and memory over the whole run, as metrics with steps."""

from __future__ import annotations

import threading

import psutil

from pypads.recording.run_loggers.base import RunLogger, RunSettings
from pypads.run import RunContext


class HardwareSampler(RunLogger):
    """Every ``interval`` seconds: metrics ``process.cpu_percent`` (of one core),
    ``process.rss_mb`` and ``system.ram_percent``, step = the sample's number
    from 0. Off by
    default; add it with ``init_run_fns=[*DEFAULT_INIT_RUN_FNS, HardwareSampler()]``.
    One sample costs a few psutil reads (well under 1 ms), so at the default interval
    the sampler uses far less than 1% of one core."""

    def __init__(self, interval: float = 1.0) -> None:
        if interval <= 0:
            raise ValueError(f"HardwareSampler: interval must be positive, not {interval!r}")
        self.interval = interval

    def log(self, run: RunContext, settings: RunSettings) -> None:
        stop = threading.Event()
        process = psutil.Process()
        process.cpu_percent(interval=None)  # the first reading only starts the clock

        def sample() -> None:
            step = -1
            while not stop.wait(self.interval):
                step += 1  # the first sample at step 0, as every series pypads logs
                run.writer.log_metrics({
                    "process.cpu_percent": process.cpu_percent(interval=None),
                    "process.rss_mb": process.memory_info().rss / 1024**2,
                    "system.ram_percent": psutil.virtual_memory().percent,
                }, step=step)

        thread = threading.Thread(target=sample, name="pypads-hardware-sampler", daemon=True)
        thread.start()

        def finish() -> None:
            stop.set()
            thread.join(timeout=5)

        run.on_end(finish)
