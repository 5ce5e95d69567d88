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


def _library(file: MappingFile) -> dict[str, str | None]:
    """The distribution that provides ``file``'s library here, and its version."""
    return dict(_installed(file.distributions))


@functools.cache
def _installed(distributions: tuple[str, ...]) -> tuple[tuple[str, str | None], ...]:
    for distribution in distributions:
        version = installed_version(distribution)
        if version is not None:
            return ("name", distribution), ("version", str(version))
    return ("name", distributions[0]), ("version", None)


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


def distribution_of(subject: Any, mappings: tuple[MappingFile, ...]) -> str | None:
    """The installed distribution of the library ``subject`` belongs to (``xgboost-cpu``
    for an XGBoost model), as its mapping file names it; None for one no file maps."""
    file = mapping_for(subject, mappings)
    return dict(_installed(file.distributions))["name"] if file is not None else None


def provenance(logger: str, mappings: tuple[MappingFile, ...] = (), subject: Any = None) -> dict[str, Any]:
    file = mapping_for(subject, mappings) if subject is not None else None
    return {
        "logger": logger,
        "pypads_version": pypads_version(),
        "mapping": {"file": Path(file.source).name, "version": str(file.mapping_version)} if file else None,
        "library": _library(file) if file else None,
    }


__all__ = ["distribution_of", "mapping_for", "provenance", "pypads_version"]
