"""The MLflow side of a run: reads the run's journal as it grows and uploads it.

- :mod:`pypads.to_mlflow.uploader.uploading`: :class:`Uploader`, which opens the run, uploads the
  journal in batches and ends the run;
- :mod:`pypads.to_mlflow.uploader.recovery`: :func:`recover`, for journals left behind;
- :mod:`pypads.to_mlflow.uploader.serving`: :func:`main`, the uploader as a process of its own;
- :mod:`pypads.to_mlflow.uploader.reports`: how failures reach the script.

The script's side of the link to it is :mod:`pypads.to_mlflow.link`; the timeout policy is
:mod:`pypads.to_mlflow.timeouts`.
"""

from __future__ import annotations

from pypads.to_mlflow.uploader.recovery import Recovery, recover
from pypads.to_mlflow.uploader.reports import Warn, WriterWarning, warn_locally
from pypads.to_mlflow.uploader.serving import main, serve
from pypads.to_mlflow.uploader.uploading import OpenRun, Uploader

__all__ = ["OpenRun", "Recovery", "Uploader", "Warn", "WriterWarning", "main", "recover", "serve", "warn_locally"]
