"""The MLflow side of a run: reads the run's journal as it grows and uploads it.

- :mod:`pypads.uploader.uploading`: :class:`Uploader`, which opens the run, uploads the
  journal in batches and ends the run;
- :mod:`pypads.uploader.recovery`: :func:`recover`, for journals left behind;
- :mod:`pypads.uploader.serving`: :func:`main`, the uploader as a process of its own;
- :mod:`pypads.uploader.reports`: how failures reach the script.

The script's side of the link to it is :mod:`pypads.link`; the timeout policy is
:mod:`pypads.timeouts`.
"""

from __future__ import annotations

from pypads.timeouts import LOCAL_TIMEOUT, SERVER_TIMEOUT, AnswerClock, default_timeout, recovery_timeout
from pypads.uploader.recovery import Recovery, recover
from pypads.uploader.reports import Warn, WriterWarning, warn_locally
from pypads.uploader.serving import main, serve
from pypads.uploader.uploading import OpenRun, Uploader, connection

# The timeout policy is re-exported: it lived here before pypads.timeouts.
__all__ = ["LOCAL_TIMEOUT", "SERVER_TIMEOUT", "AnswerClock", "OpenRun", "Recovery", "Uploader", "Warn", "WriterWarning",
           "connection", "default_timeout", "main", "recover", "recovery_timeout", "serve", "warn_locally"]
