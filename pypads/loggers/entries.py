"""Submitting journal entries the uploader turns into more than a value: a model, a
dataset input, a child run (see :meth:`pypads.journal.Journal.record_entry`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pypads.writer import Writer


def submit(writer: Writer, entry: Mapping[str, Any], content: bytes | None = None) -> None:
    """Journal ``entry`` (and ``content``, a pickled model) through the writer, which
    handles a run that has ended or a journal that cannot be written as for any value."""
    log_entry = getattr(writer, "log_entry", None)
    if log_entry is not None:
        log_entry(entry, content)
        return
    # Until the writer has log_entry: the path its own log_* methods take.
    writer._late(lambda: writer.journal.record_entry(dict(entry), content))
