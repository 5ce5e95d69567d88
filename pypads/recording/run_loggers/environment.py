"""What users of other trackers get with no code: the exact packages and the console."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import PurePath
from typing import Any, TextIO

from packaging.utils import canonicalize_name

from pypads.core import redact_text
from pypads.recording.run_loggers.base import RunLogger, RunSettings
from pypads.run import RunContext

MAX_CONSOLE_BYTES = 5_000_000


class IPackages(RunLogger):
    """``environment/requirements.txt``: every distribution of the running interpreter
    with its exact version (``name==version``). The interpreter's path is in
    ``environment/system.json`` (``IPid``)."""

    def log(self, run: RunContext, settings: RunSettings) -> None:
        pins = sorted({pin for dist in metadata.distributions() if (pin := _pin(dist))}, key=str.lower)
        run.writer.log_text("environment/requirements.txt", "\n".join(pins) + "\n")


def _pin(dist: metadata.Distribution) -> str | None:
    """``name==version`` of one distribution, the name canonical (``scikit-learn``).

    A wheel's ``<name>-<version>.dist-info`` folder says both: reading them there spares
    parsing every metadata file with the e-mail parser, a hundred or so of them, on a
    thread that shares the interpreter's lock with the script (two thirds of the run
    loggers' time). Other installs (``.egg-info``, zips) are read from their metadata.
    """
    folder = getattr(dist, "_path", None)  # PathDistribution's; no public name for it
    name = folder.name if isinstance(folder, PurePath) else ""
    # The suffix has a hyphen of its own: the name is counted without it.
    stem = name[: -len(".dist-info")] if name.endswith(".dist-info") else ""
    if stem.count("-") == 1:
        project, version = stem.split("-")
        return f"{canonicalize_name(project)}=={version}"
    meta = dist.metadata
    return f"{canonicalize_name(meta['Name'])}=={meta['Version']}" if meta["Name"] else None


class _ConsoleCopy:
    """A stream that writes through to the original and keeps a capped copy.

    No lock: a signal handler that prints would run in the middle of a ``write`` it
    interrupted and wait for that lock forever. Appending to a list is atomic under the
    GIL; two threads writing at once can overshoot the cap by one write each, no more.
    """

    def __init__(self, original: TextIO, limit: int) -> None:
        self.original = original
        self.limit = limit
        self.parts: list[str] = []
        self.size = 0
        self.cut = False

    def write(self, text: str) -> int:
        written = self.original.write(text)
        room = self.limit - self.size
        if room > 0:
            kept = text[:room]
            self.parts.append(kept)
            self.size += len(kept)
            if len(kept) < len(text):
                self.cut = True
        else:
            self.cut = True
        return written

    def flush(self) -> None:
        self.original.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)

    def text(self) -> str:
        return "".join(list(self.parts)) + ("\n[pypads: console output cut at the size cap]\n" if self.cut else "")


class IConsole(RunLogger):
    """``console/stdout.txt`` and ``console/stderr.txt``: what the script printed while
    the run was tracked (capped at ``max_bytes`` characters each), written when the run
    ends — normally, by an exception or a signal. Credentials in URLs and secret
    ``name=value`` pairs are hidden (see :mod:`pypads.core.privacy`)."""

    in_background = False  # the first line the script prints must be captured

    def __init__(self, max_bytes: int = MAX_CONSOLE_BYTES) -> None:
        self.max_bytes = max_bytes

    def log(self, run: RunContext, settings: RunSettings) -> None:
        tees = {"stdout": _ConsoleCopy(sys.stdout, self.max_bytes), "stderr": _ConsoleCopy(sys.stderr, self.max_bytes)}
        sys.stdout, sys.stderr = tees["stdout"], tees["stderr"]

        def finish() -> None:
            for stream_name, tee in tees.items():
                if getattr(sys, stream_name) is tee:
                    setattr(sys, stream_name, tee.original)
                run.writer.log_text(f"console/{stream_name}.txt", redact_text(tee.text()))

        run.on_end(finish)
