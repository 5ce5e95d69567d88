"""Where a JSON artifact comes from: logger, pypads version, mapping file, library."""

from __future__ import annotations

import functools
from importlib import metadata
from pathlib import Path
from typing import Any

from pypads.core import MappingFile, installed_version


@functools.cache
def pypads_version() -> str:
    try:
        return metadata.version("pypads")
    except metadata.PackageNotFoundError:
        return "unknown"


@functools.cache
def _library_version(distribution: str) -> str | None:
    version = installed_version(distribution)
    return str(version) if version is not None else None


def mapping_for(subject: Any, mappings: tuple[MappingFile, ...]) -> MappingFile | None:
    """The mapping file of the library ``subject`` (an instance, class or function)
    belongs to; for a user's subclass, the first mapped library among its bases."""
    kinds = type(subject).__mro__ if not isinstance(subject, type) and not callable(subject) else (
        subject.__mro__ if isinstance(subject, type) else (subject,))
    for kind in kinds:
        root = (getattr(kind, "__module__", None) or "").split(".")[0]
        for file in mappings:
            if file.library == root:
                return file
    return None


def provenance(logger: str, mappings: tuple[MappingFile, ...] = (), subject: Any = None) -> dict[str, Any]:
    file = mapping_for(subject, mappings) if subject is not None else None
    return {
        "logger": logger,
        "pypads_version": pypads_version(),
        "mapping": {"file": Path(file.source).name, "version": str(file.mapping_version)} if file else None,
        "library": {"name": file.distribution, "version": _library_version(file.distribution)} if file else None,
    }


__all__ = ["mapping_for", "provenance", "pypads_version"]
