"""The durable local copy of what a run still owes MLflow.

Params, metrics, tags and artifacts are on local disk before the call that logged
them returns, appended to files kept open. The uploader (:mod:`pypads.to_mlflow.uploader`) reads
the journal as it grows, uploads from it and records how far it got: the script and the
uploader share nothing but these files, so the uploader can run in a process of its
own. A journal whose script and uploader are both gone (SIGKILL, or a store that did
not answer) is left behind, and the next ``PyPads()`` uploads what is missing.

- :mod:`pypads.to_mlflow.journal.format`: the files, their lines and the meta's fields;
- :mod:`pypads.to_mlflow.journal.writing`: :class:`JournalWriter`, the script's side;
- :mod:`pypads.to_mlflow.journal.reading`: :class:`JournalReader`, the uploader's side, and
  :func:`left_behind`.

Besides params, metrics, tags and artifacts, a line may be an entry the uploader turns
into more than a value (:data:`ENTRY_KINDS`): a model to save as an MLflow model, a
dataset to log as a run input, a child run to create and end in one go, a model's
predictions to score and draw.
"""

from __future__ import annotations

from pypads.to_mlflow.journal.format import (
    ENTRY_KINDS,
    INLINE_LIMIT,
    PRIVATE_FILE,
    PRIVATE_FOLDER,
    RESERVE_BYTES,
    journal_root,
    write_atomically,
    write_then_name,
)
from pypads.to_mlflow.journal.reading import MAX_TAG_LENGTH, Batch, JournalReader, left_behind
from pypads.to_mlflow.journal.writing import JournalWriter

__all__ = ["ENTRY_KINDS", "INLINE_LIMIT", "MAX_TAG_LENGTH", "PRIVATE_FILE", "PRIVATE_FOLDER", "RESERVE_BYTES", "Batch",
           "JournalReader", "JournalWriter", "journal_root", "left_behind", "write_atomically",
           "write_then_name"]
