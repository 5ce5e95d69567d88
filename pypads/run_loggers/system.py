"""What the run ran on: system, CPU, memory, disk, process, network and MAC address.

Each logger sets searchable tags ``pypads.<area>.<field>``; identifying values
(hostname, IP and MAC address) become salted pseudonyms when ``pseudonymize`` is on.
"""

from __future__ import annotations

import os
import platform
import socket
import sys
import uuid

import psutil

from pypads.context import RunContext
from pypads.privacy import REDACTED, is_secret_name, redact_argv, redact_text
from pypads.run_loggers.base import RunLogger, RunSettings

_GB = 1024**3


class ISystem(RunLogger):
    """``pypads.system.os``, ``.version``, ``.machine``, ``.python``, ``.hostname``."""

    def log(self, run: RunContext, settings: RunSettings) -> None:
        run.writer.set_tags({
            "pypads.system.os": platform.system(),
            "pypads.system.version": platform.release(),
            "pypads.system.machine": platform.machine(),
            "pypads.system.python": platform.python_version(),
            "pypads.system.hostname": settings.identifying(platform.node()),
        })


class ICpu(RunLogger):
    """``pypads.cpu.cores`` (logical), ``.physical_cores``, ``.min_mhz``, ``.max_mhz``."""

    def log(self, run: RunContext, settings: RunSettings) -> None:
        tags = {"pypads.cpu.cores": str(psutil.cpu_count()), "pypads.cpu.physical_cores": str(psutil.cpu_count(logical=False))}
        frequency = psutil.cpu_freq()  # None where the OS does not tell
        if frequency is not None:
            tags.update({"pypads.cpu.min_mhz": f"{frequency.min:.0f}", "pypads.cpu.max_mhz": f"{frequency.max:.0f}"})
        run.writer.set_tags(tags)


class IRam(RunLogger):
    """``pypads.ram.total_gb`` and ``pypads.ram.swap_gb``."""

    def log(self, run: RunContext, settings: RunSettings) -> None:
        run.writer.set_tags({
            "pypads.ram.total_gb": f"{psutil.virtual_memory().total / _GB:.2f}",
            "pypads.ram.swap_gb": f"{psutil.swap_memory().total / _GB:.2f}",
        })


class IDisk(RunLogger):
    """``pypads.disk.total_gb`` and ``.free_gb`` of the working directory's disk."""

    def log(self, run: RunContext, settings: RunSettings) -> None:
        usage = psutil.disk_usage(os.getcwd())
        run.writer.set_tags({"pypads.disk.total_gb": f"{usage.total / _GB:.2f}",
                             "pypads.disk.free_gb": f"{usage.free / _GB:.2f}"})


class IPid(RunLogger):
    """``pypads.process.pid``, ``.command`` (secrets redacted), ``.cpu_percent``, ``.rss_mb``."""

    def log(self, run: RunContext, settings: RunSettings) -> None:
        process = psutil.Process()
        run.writer.set_tags({
            "pypads.process.pid": str(process.pid),
            "pypads.process.command": " ".join(redact_argv([sys.executable, *sys.argv])),
            "pypads.process.cpu_percent": f"{process.cpu_percent(interval=None):.1f}",
            "pypads.process.rss_mb": f"{process.memory_info().rss / 1024**2:.1f}",
        })


class ISocketInfo(RunLogger):
    """``pypads.network.hostname`` and ``pypads.network.ip``."""

    def log(self, run: RunContext, settings: RunSettings) -> None:
        hostname = socket.gethostname()
        try:
            address = socket.gethostbyname(hostname)
        except OSError:  # a host that cannot resolve its own name
            address = ""
        run.writer.set_tags({
            "pypads.network.hostname": settings.identifying(hostname),
            "pypads.network.ip": settings.identifying(address),
        })


class IMacAddress(RunLogger):
    """``pypads.network.mac``."""

    def log(self, run: RunContext, settings: RunSettings) -> None:
        node = uuid.getnode()
        mac = ":".join(f"{(node >> shift) & 0xFF:02x}" for shift in range(40, -8, -8))
        run.writer.set_tags({"pypads.network.mac": settings.identifying(mac)})


class IEnvironment(RunLogger):
    """Only the environment variables named in the config's ``env_allowlist``
    (none by default), as tags ``pypads.env.<NAME>``. Even allowed, a secret's value
    is not logged (a name like ``API_KEY``), nor a URL's credentials
    (``DATABASE_URL``): see :mod:`pypads.privacy`."""

    def log(self, run: RunContext, settings: RunSettings) -> None:
        tags = {f"pypads.env.{name}": _safe_value(name, os.environ[name])
                for name in settings.env_allowlist if name in os.environ}
        if tags:
            run.writer.set_tags(tags)


def _safe_value(name: str, value: str) -> str:
    return REDACTED if is_secret_name(name) else redact_text(value)
