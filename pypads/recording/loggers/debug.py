"""Log and LogInit: debugging loggers that narrate tracked calls through loguru."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pypads.core import Logger
from pypads.recording.narrator import logger
from pypads.run import TrackedCall


class Log(Logger):
    """Logs entry and exit of each call (``pypads_log`` hook) at DEBUG level."""

    def pre(self, call: TrackedCall, options: Mapping[str, Any]) -> None:
        logger.debug("pypads: calling {} (call {}, depth {})", call.name, call.number, call.depth)

    def post(self, call: TrackedCall, before: None, options: Mapping[str, Any]) -> None:
        outcome = "raised " + type(call.exception).__name__ if call.exception else "returned"
        logger.debug("pypads: {} {} after {:.6f}s", call.name, outcome, call.duration or 0.0)


class LogInit(Logger):
    """Logs the construction of tracked objects (``pypads_init`` hook) at DEBUG level."""

    def pre(self, call: TrackedCall, options: Mapping[str, Any]) -> None:
        logger.debug("pypads: initialising {}", call.name)
