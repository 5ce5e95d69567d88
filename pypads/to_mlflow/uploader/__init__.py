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

from pypads.to_mlflow.timeouts import LOCAL_TIMEOUT, SERVER_TIMEOUT, AnswerClock, default_timeout, recovery_timeout
from pypads.to_mlflow.uploader.recovery import Recovery, recover
from pypads.to_mlflow.uploader.reports import Warn, WriterWarning, warn_locally
from pypads.to_mlflow.uploader.serving import main, serve
from pypads.to_mlflow.uploader.uploading import OpenRun, Uploader, connection

# The timeout policy is re-exported: it lived here before pypads.to_mlflow.timeouts.
__all__ = ["LOCAL_TIMEOUT", "SERVER_TIMEOUT", "AnswerClock", "OpenRun", "Recovery", "Uploader", "Warn", "WriterWarning",
           "connection", "default_timeout", "main", "recover", "recovery_timeout", "serve", "warn_locally"]
