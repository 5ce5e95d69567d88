"""What the run ran on: system, CPU, memory, disk, process, network and MAC address.

The facts go into one small artifact, ``environment/system.json`` (schema
``urn:pypads:schema:system:1``), not into tags: a run's tags are what people filter
by, and a machine's identity should not be in every row of the runs table. Only
:class:`ISystem` sets tags, three of them: ``pypads.os``, ``pypads.python`` and
``pypads.host``.

Each logger adds its section to the run's facts; the file is written once, on the run
loggers' thread, after the last of them (:func:`write_system_facts`). A value the
machine does not tell (a CPU frequency psutil reports as 0 or not at all, a MAC
address Python had to make up, an address the host cannot resolve) is left out,
never written as ``0``. Identifying values (hostname, user, IP and MAC address)
become keyed pseudonyms when the config's ``pseudonymize`` is on.
"""

from __future__ import annotations

import getpass
import json
import os
import platform
import socket
import sys
import threading
import uuid
from typing import Any

import psutil

from pypads.core import REDACTED, is_secret_name, redact_argv, redact_text
from pypads.recording.provenance import pypads_version
from pypads.recording.run_loggers.base import RunLogger, RunSettings
from pypads.run import RunContext

_GB = 1024**3
SYSTEM_JSON = "environment/system.json"
SYSTEM_SCHEMA = "urn:pypads:schema:system:1"  # pypads.core.schemas.SYSTEM, not imported: that module reads files
SYSTEM_LOGGERS = ("ISystem", "ICpu", "IRam", "IDisk", "IPid", "ISocketInfo", "IMacAddress")

_FACTS_KEY = "pypads.recording.run_loggers.system"  # the key of the run's collected facts in RunContext.state


class _Facts:
    """The sections collected for one run's ``system.json``, and who added them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sections: dict[str, dict[str, Any]] = {}
        self.loggers: list[str] = []
        self.pseudonymized = False
        self.written = False


def _facts(run: RunContext) -> _Facts:
    state = run.state(_FACTS_KEY)
    found = state.get("facts")
    if found is None:
        found = state.setdefault("facts", _Facts())  # atomic: two threads get the same one
    return found


def add_facts(run: RunContext, logger: str, section: str, values: dict[str, Any], settings: RunSettings) -> None:
    """Add ``values`` to ``section`` of the run's ``system.json``; ``None`` values (not
    known) are left out."""
    facts = _facts(run)
    with facts.lock:
        facts.sections.setdefault(section, {}).update({key: value for key, value in values.items() if value is not None})
        if logger not in facts.loggers:
            facts.loggers.append(logger)
        facts.pseudonymized = facts.pseudonymized or settings.pseudonymize


def system_document(run: RunContext) -> dict[str, Any] | None:
    """The ``system.json`` document of the facts collected so far, or None if none were."""
    facts = _facts(run)
    with facts.lock:
        if not facts.sections:
            return None
        document: dict[str, Any] = {
            "schema": SYSTEM_SCHEMA,
            "provenance": {"logger": ", ".join(facts.loggers), "pypads_version": pypads_version(),
                           "mapping": None, "library": None},
            "pseudonymized": facts.pseudonymized,
        }
        document.update({section: dict(values) for section, values in facts.sections.items() if values})
    return document


def write_system_facts(run: RunContext) -> None:
    """Write ``environment/system.json`` once, if any logger added facts (called on the
    run loggers' thread, after the last of them)."""
    facts = _facts(run)
    document = system_document(run)
    with facts.lock:
        if document is None or facts.written:
            return
        facts.written = True
    run.writer.log_text(SYSTEM_JSON, json.dumps(document, indent=1, sort_keys=False) + "\n")


def _positive(value: float | int | None, digits: int | None = None) -> float | int | None:
    """``value`` if the machine told it (not None, not 0 or less), rounded to ``digits``."""
    if value is None or value <= 0:
        return None
    return round(value, digits) if digits is not None else value


def login_name() -> str | None:
    """The login name, as MLflow's ``mlflow.user`` takes it; None if there is none."""
    try:
        return getpass.getuser()
    except Exception:  # no $USER and no password entry (a container's arbitrary uid)
        return None


class ISystem(RunLogger):
    """Tags ``pypads.os`` (``Linux 6.8.0``), ``pypads.python`` (``3.12.3``) and
    ``pypads.host`` (the hostname); section ``system`` of ``environment/system.json``:
    ``os``, ``release``, ``machine``, ``python``, ``implementation``, ``hostname``,
    ``user``."""

    def log(self, run: RunContext, settings: RunSettings) -> None:
        hostname = platform.node() or None
        user = login_name()
        system = platform.system() or None
        release = platform.release() or None
        add_facts(run, self.name, "system", {
            "os": system, "release": release, "machine": platform.machine() or None,
            "python": platform.python_version(), "implementation": platform.python_implementation(),
            "hostname": settings.identifying(hostname) if hostname else None,
            "user": settings.identifying(user) if user else None,
        }, settings)
        tags = {"pypads.python": platform.python_version()}
        if system:
            tags["pypads.os"] = f"{system} {release}" if release else system
        if hostname:
            tags["pypads.host"] = settings.identifying(hostname)
        run.writer.set_tags(tags)


class ICpu(RunLogger):
    """Section ``cpu``: ``logical_cores``, ``physical_cores``, ``min_mhz``, ``max_mhz``,
    each only where the machine tells it (many VMs report no frequency: psutil gives
    0 or None, and the key is absent)."""

    def log(self, run: RunContext, settings: RunSettings) -> None:
        frequency = psutil.cpu_freq()  # None where the OS does not tell; 0.0 min/max on many VMs
        add_facts(run, self.name, "cpu", {
            "logical_cores": _positive(psutil.cpu_count()),
            "physical_cores": _positive(psutil.cpu_count(logical=False)),
            "min_mhz": _positive(getattr(frequency, "min", None), 0),
            "max_mhz": _positive(getattr(frequency, "max", None), 0),
        }, settings)


class IRam(RunLogger):
    """Section ``memory``: ``total_gb`` and ``swap_gb`` (0 when the machine has no swap:
    that is known, not a placeholder)."""

    def log(self, run: RunContext, settings: RunSettings) -> None:
        swap = psutil.swap_memory().total
        add_facts(run, self.name, "memory", {
            "total_gb": _positive(psutil.virtual_memory().total / _GB, 2),
            "swap_gb": round(swap / _GB, 2) if swap is not None and swap >= 0 else None,
        }, settings)


class IDisk(RunLogger):
    """Section ``disk``: ``total_gb`` and ``free_gb`` of the working directory's disk."""

    def log(self, run: RunContext, settings: RunSettings) -> None:
        usage = psutil.disk_usage(os.getcwd())
        add_facts(run, self.name, "disk", {"total_gb": _positive(usage.total / _GB, 2),
                                            "free_gb": round(usage.free / _GB, 2)}, settings)


class IPid(RunLogger):
    """Section ``process``: ``pid``, ``command`` (secrets redacted), ``executable`` (the
    interpreter) and ``rss_mb`` at the start."""

    def log(self, run: RunContext, settings: RunSettings) -> None:
        process = psutil.Process()
        add_facts(run, self.name, "process", {
            "pid": process.pid,
            "command": " ".join(redact_argv([sys.executable, *sys.argv])),
            "executable": sys.executable or None,
            "rss_mb": _positive(process.memory_info().rss / 1024**2, 1),
        }, settings)


class ISocketInfo(RunLogger):
    """Section ``network``: ``ip``, the address the hostname resolves to (absent if it
    does not resolve), and ``hostname`` as the socket layer names it, where that differs
    from the system's."""

    def log(self, run: RunContext, settings: RunSettings) -> None:
        hostname = socket.gethostname()
        try:
            address: str | None = socket.gethostbyname(hostname)
        except OSError:  # a host that cannot resolve its own name
            address = None
        add_facts(run, self.name, "network", {
            "hostname": settings.identifying(hostname) if hostname and hostname != platform.node() else None,
            "ip": settings.identifying(address) if address else None,
        }, settings)


class IMacAddress(RunLogger):
    """Section ``network``: ``mac``; absent where Python found no hardware address and
    made a random one up (``uuid.getnode`` then sets the multicast bit)."""

    def log(self, run: RunContext, settings: RunSettings) -> None:
        node = uuid.getnode()
        if (node >> 40) & 1:  # RFC 4122: a random node has the multicast bit set
            return
        mac = ":".join(f"{(node >> shift) & 0xFF:02x}" for shift in range(40, -8, -8))
        add_facts(run, self.name, "network", {"mac": settings.identifying(mac)}, settings)


class IEnvironment(RunLogger):
    """Only the environment variables named in the config's ``env_allowlist``
    (none by default), as tags ``pypads.env.<NAME>``. Even allowed, a secret's value
    is not logged (a name like ``API_KEY``), nor a URL's credentials
    (``DATABASE_URL``): see :mod:`pypads.core.privacy`."""

    def log(self, run: RunContext, settings: RunSettings) -> None:
        tags = {f"pypads.env.{name}": _safe_value(name, os.environ[name])
                for name in settings.env_allowlist if name in os.environ}
        if tags:
            run.writer.set_tags(tags)


def _safe_value(name: str, value: str) -> str:
    return REDACTED if is_secret_name(name) else redact_text(value)
