"""The run, the third floor: the context a tracked run keeps (counters, per-logger
state, failures), the writer every logger hands its values to, and the run's end.

This module is the floor's face: the floors above (what is recorded, and ``PyPads``
itself) import the run from here, never from its modules.
"""

from pypads.run.context import RunContext, TrackedCall
from pypads.run.fluent import Environment, store_for
from pypads.run.lifecycle import FAILED, FINISHED, KILLED, ExitHooks
from pypads.run.writer import Writer

__all__ = ["FAILED", "FINISHED", "KILLED", "Environment", "ExitHooks", "RunContext", "TrackedCall", "Writer", "store_for"]
