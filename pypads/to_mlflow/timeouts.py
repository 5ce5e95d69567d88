"""How long the script waits for MLflow: the one timeout policy, and the clock it reads.

A store that does not answer must never hold the script. So every wait on the uploader
is bounded, not by a fixed time for the whole upload, but by how long *one* MLflow call
has gone unanswered: a store that is merely busy (thousands of files) keeps answering.
The uploader times each call with an :class:`AnswerClock`; the script waits on one
(directly, or fed by the uploader process' readings, see :mod:`pypads.to_mlflow.wire`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pypads.to_mlflow.store import Store

# Seconds one MLflow call may go unanswered before the end of a run gives up on it (the
# journal keeps the data): short for a server, which may be down; long for a store on
# this machine, which is never down but takes seconds to create MLflow's tables on first use.
SERVER_TIMEOUT = 5.0
LOCAL_TIMEOUT = 60.0


def default_timeout(store: Store) -> float:
    """The end's timeout for ``store`` when the config sets none."""
    return LOCAL_TIMEOUT if store.is_local else SERVER_TIMEOUT


def recovery_timeout(timeout: float) -> float:
    """How long an end waits for the recovery of other runs' journals: their stores may
    be servers that are down, and what is left a later PyPads() finishes."""
    return min(timeout, SERVER_TIMEOUT)


# The longest pause between two tries of a call that failed for a server that is down or
# overloaded: short enough that what waited arrives seconds after the server is back.
MOST_BACKOFF = 8.0
# How long an uploader goes on trying once its script has exited without the run's end
# (the script waited its timeout): a server restarting, or down for an hour. After that
# the journal stays, for ``pypads sync`` or the next PyPads().
PATIENCE = 600.0


class AnswerClock:
    """When the MLflow call in progress began: lets a thread that waits for another
    tell a store that does not answer from one that is merely busy.

    ``idle_limit``: how long a wait goes on while no call is in progress and nothing
    happens either (no call starts or ends): an uploader stuck outside MLflow, which no
    store timeout would ever end. Never less than the wait's own timeout.

    ``passing``: whether an error a call raised says the store is down or overloaded
    for now (a refused connection, HTTP 503). Such a call is tried again, after a pause
    that doubles up to :data:`MOST_BACKOFF`, and counts as one unanswered call all along;
    without end, until :meth:`give_up_after` sets a deadline.
    """

    def __init__(self, idle_limit: float = LOCAL_TIMEOUT,
                 passing: Callable[[BaseException], bool] = lambda error: False) -> None:
        self._since: float | None = None
        self._last_event = time.monotonic()
        self.idle_limit = idle_limit
        self._passing = passing
        self._deadline: float | None = None

    def call(self, function: Callable[..., Any], *args: Any) -> Any:
        self.started()
        try:
            pause = 0.5
            while True:
                try:
                    return function(*args)
                except Exception as error:
                    if not self._passing(error) or self._past(time.monotonic() + pause):
                        raise
                time.sleep(pause)
                pause = min(2 * pause, MOST_BACKOFF)
        finally:
            self.answered()

    def give_up_after(self, seconds: float) -> None:
        """From now on, a call that fails for a passing reason is tried again only
        until ``seconds`` from now."""
        self._deadline = time.monotonic() + seconds

    def _past(self, moment: float) -> bool:
        return self._deadline is not None and moment > self._deadline

    def started(self) -> None:
        self._since = self._last_event = time.monotonic()

    def answered(self) -> None:
        self._since = None
        self._last_event = time.monotonic()

    @property
    def busy(self) -> bool:
        return self._since is not None

    def wait(self, done: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``done()`` as long as MLflow answers: False once one call has
        waited ``timeout`` seconds (counted from now at the earliest), or once nothing
        has happened for ``max(timeout, idle_limit)`` seconds with no call in progress."""
        waiting_from = time.monotonic()
        idle_limit = max(timeout, self.idle_limit)
        while not done():
            time.sleep(0.02)
            since, now = self._since, time.monotonic()
            if since is not None and now - max(since, waiting_from) > timeout:
                return False
            if since is None and now - max(self._last_event, waiting_from) > idle_limit:
                return False
        return True
