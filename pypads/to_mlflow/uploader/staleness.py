"""When a spare uploader (:mod:`pypads.to_mlflow.uploader.spare`) may not serve a run: it would
upload with other code, another MLflow, or a SQLite store that is not the file it opened."""

from __future__ import annotations

import os
import sys
import time
from importlib import metadata
from pathlib import Path

from pypads.to_mlflow.journal.format import JournalFolder
from pypads.to_mlflow.store import sqlite_file

_STARTED = time.time()  # this module is imported as the uploader starts


def stale(sqlite_files: dict[str, tuple[int, int]], journal: str, cwd: str) -> str | None:
    """Why this spare may not serve the run of ``journal`` (a folder, relative to the
    claiming script's ``cwd``), if it may not: it would upload with code or a store other
    than a fresh uploader of that script would. ``sqlite_files``: the SQLite stores this
    process used, and their identities then (:func:`sqlite_identity`)."""
    for name, module in list(sys.modules.items()):
        source = getattr(module, "__file__", None)
        if (name == "pypads" or name.startswith("pypads.")) and source:
            try:
                if os.stat(source).st_mtime > _STARTED:
                    return f"{source} changed"
            except OSError:
                return f"{source} is gone"
    mlflow = sys.modules.get("mlflow")
    if mlflow is not None:
        try:
            if metadata.version("mlflow") != getattr(mlflow, "__version__", None):
                return "another MLflow was installed"
        except metadata.PackageNotFoundError:
            return "MLflow was uninstalled"
    # MLflow keeps the store it opened for a URI: a SQLite file removed or replaced since
    # would be written through a connection to what is gone, or lack MLflow's tables.
    database = _target_database(journal, cwd)
    if database is not None and database in sqlite_files:
        try:
            info = os.stat(database)
        except OSError:
            return f"{database} is gone"
        if (info.st_dev, info.st_ino) != sqlite_files[database] or _holds_deleted(database):
            return f"{database} was replaced"
    return None


def _holds_deleted(path: str) -> bool:
    """Whether this process still has the removed file that was at ``path`` open (a
    pooled connection of MLflow's store): a new file there may have the old one's inode
    number. Linux only (``/proc``); elsewhere the identity check stands alone."""
    try:
        descriptors = os.listdir("/proc/self/fd")
    except OSError:
        return False
    for descriptor in descriptors:
        try:
            if os.readlink(f"/proc/self/fd/{descriptor}") == f"{path} (deleted)":
                return True
        except OSError:
            continue
    return False


def _target_database(journal: str, cwd: str) -> str | None:
    """The SQLite file the claimed run goes to, from its journal's meta (None for any
    other store, or a journal that does not say)."""
    try:
        uri = JournalFolder(Path(cwd) / journal).meta()["tracking_uri"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return sqlite_path(uri, cwd) if isinstance(uri, str) else None


def sqlite_path(tracking_uri: str, cwd: str) -> str | None:
    """The absolute path of a SQLite store's file (None for any other store)."""
    database = sqlite_file(tracking_uri)
    return os.path.abspath(Path(cwd) / database) if database is not None else None


def sqlite_identity(tracking_uri: str) -> tuple[str, tuple[int, int]] | None:
    """The file of a SQLite store this process used, and its identity now."""
    path = sqlite_path(tracking_uri, os.getcwd())
    if path is None:
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    return path, (info.st_dev, info.st_ino)
