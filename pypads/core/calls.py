"""The tracked call: what happens between a patched attribute being called and its return.

A :class:`CallSite` belongs to one patched attribute. It runs the original exactly once
with the caller's arguments and, while a run is being tracked, surrounds it with the
pre and post phases of the loggers its hooks' events name. Exceptions of the original
reach the caller unchanged; exceptions of loggers never do (see ``RunOfCalls.logger_failed``).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from pypads.core.call import Call, RunOfCalls
from pypads.core.errors import PASSES_THROUGH_LOGGERS
from pypads.core.logger import LoggerOnEvent
from pypads.core.mapping.model import CallReading


class Session:
    """The live switches that every call site consults: the run and the recursion rules.

    ``run`` is ``None`` outside a run; then every patched call is a plain pass-through.
    """

    def __init__(self, recursion_depth: int = -1, recursion_identity: bool = False, tracker: object = None) -> None:
        self.run: RunOfCalls | None = None
        self.recursion_depth = recursion_depth
        self.recursion_identity = recursion_identity
        # The PyPads the session belongs to. The core sits below it, so it only keeps it
        # for the floor above, which finds the tracker in charge here (no second global).
        self.tracker = tracker


# The session of the PyPads() in charge: patches are process-wide, so one at a time.
_tracking: Session | None = None


def tracked_run() -> RunOfCalls | None:
    """The run calls are tracked into in this process, if any: for code outside a
    tracked call (``callmonitor.intercept``). It is the session's, the one pointer."""
    session = _tracking
    return session.run if session is not None else None


def tracking_session() -> Session | None:
    """The session of the PyPads() in charge of this process, if any."""
    return _tracking


def set_tracking_session(session: Session | None) -> None:
    """Make ``session`` the one :func:`tracked_run` reads (None: no PyPads() in charge)."""
    global _tracking
    _tracking = session


class _ThreadState(threading.local):
    """What a tracked call needs to know of the thread it runs in: an attribute each, not
    a context variable, whose set and reset make a new context each; on a metric called
    in a loop, three such pairs per call were a tenth of what tracking it cost.

    Per thread is per asyncio task as well. A tracked call runs its original to the end
    before it returns, and pypads' own work never awaits or yields, so whenever a task
    can be switched both are as that task found them. A signal handler runs on the thread
    it interrupted and sees both as they were there. Under gevent, which makes
    ``threading.local`` greenlet-local when it patches before pypads is imported, they
    are per greenlet. Unlike a context variable, neither follows a context copied into
    another thread (``asyncio.to_thread``): calls there are that thread's own, as calls
    in a thread of joblib's or of the script's are.
    """

    # Set while pypads' own code runs (the loggers, the call's bookkeeping), so that tracked
    # code it calls, or that a signal handler interrupting it calls, is not tracked again.
    busy = False
    # The innermost tracked call of this thread: the parent of a call made inside it.
    # Another thread starts with none, so threads never see each other's calls.
    call: Call[RunOfCalls] | None = None


# A thread reads the class's defaults above until it sets its own.
_thread = _ThreadState()


def inside_pypads() -> bool:
    """Whether pypads' own code is running in this thread (or was interrupted there by a
    signal handler): code called now must run untracked."""
    return _thread.busy


@contextlib.contextmanager
def pypads_at_work() -> Iterator[None]:
    """Mark pypads' own work, so that whatever it calls, or a signal handler that
    interrupts it calls, runs untracked instead of waiting for a lock held right here."""
    state = _thread
    was, state.busy = state.busy, True
    try:
        yield
    finally:
        state.busy = was


def current_call() -> Call[RunOfCalls] | None:
    """The innermost tracked call that is running in this thread, if any."""
    return _thread.call


class CallSite:
    """The tracking of one patched attribute (``BaseDecisionTree.fit``, ``accuracy_score``…)."""

    __slots__ = ("session", "attribute", "hooks", "handlers", "_pre_phases", "_post_phases", "bound_to", "key", "reading")

    def __init__(
        self,
        session: Session,
        attribute: str,
        hooks: frozenset[str],
        handlers: tuple[LoggerOnEvent, ...],
        bound_to: str,
        reading: CallReading | None = None,
    ) -> None:
        self.session = session
        self.attribute = attribute
        self.hooks = hooks
        self.handlers = handlers
        # Per handler, what its phases need, looked up once rather than on every call:
        # (its index, the logger's bound pre or post, its options, its depth).
        self._pre_phases = tuple((index, handler.logger.pre, handler.options, handler.depth)
                                 for index, handler in enumerate(handlers) if handler.before)
        self._post_phases = tuple((index, handler.logger.post, handler.options, handler.depth)
                                  for index, handler in enumerate(handlers))
        # "instance", "class" or "none": what the first argument of a call is.
        self.bound_to = bound_to
        # How wrappers find this site at call time (see pypads.core.patching.dispatch).
        self.key: int | None = None
        # What the mapping file says to read of these calls (a native train's params, curves).
        self.reading = reading

    def invoke(self, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        run = self.session.run
        state = _thread
        if run is None or not self.handlers or state.busy:
            return original(*args, **kwargs)
        # Marked as pypads' own work from the call's bookkeeping through the loggers' pre
        # phases, in one stretch: a signal handler that interrupts it and calls tracked
        # code runs that code untracked, instead of waiting for a lock this very thread
        # holds. The mark was down (checked above), so taking it down again restores it.
        state.busy = True
        try:
            call = self._begin(run, original, args, kwargs)
        except BaseException:
            state.busy = False
            raise
        parent, state.call = state.call, call
        try:
            if not call.tracked:
                state.busy = False
                return original(*args, **kwargs)
            try:
                before = self._pre(call) if self._pre_phases else None
            finally:
                state.busy = False
            call.started = started = time.perf_counter()  # the duration is the original's alone
            try:
                call.result = result = original(*args, **kwargs)
            except BaseException as error:
                call.exception = error
                call.duration = time.perf_counter() - started
                self._post(call, before)
                raise
            call.duration = time.perf_counter() - started
            self._post(call, before)
            return result
        finally:
            state.call = parent

    def _begin(
        self, run: RunOfCalls, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Call[RunOfCalls]:
        """The call, pushed on the stack even when the recursion rules leave it untracked,
        so that the calls it makes see it as their parent."""
        parent = _thread.call
        session = self.session
        if self.bound_to == "none" or not args:  # a function (a metric): no receiver to name
            instance = owner = None
            name = self.attribute
            if parent is None:  # the script's own call of a function: nothing to leave to another
                order, number = run.next_call(name)
                # Positional: a metric in a loop makes one per call, and keywords cost more.
                call = Call(original, name, None, None, args, kwargs, self.hooks, run, order, number, 0, None,
                            True, 0.0)
                if self.reading is not None:  # a metric has none: one test on its path
                    call.reading = self.reading
                return call
        elif self.bound_to == "instance":
            instance, owner = args[0], type(args[0])
            name = f"{type(instance).__name__}.{self.attribute}"
        else:
            instance, owner = None, args[0]
            name = f"{getattr(owner, '__name__', str(owner))}.{self.attribute}"
        depth = 0 if parent is None else parent.depth + 1
        tracked = not (
            0 <= session.recursion_depth < depth
            or (session.recursion_identity and _encloses_same(parent, original, instance))
            # a subclass's fit calling super().fit(): one user call, tracked once
            or (parent is not None and instance is not None and parent.instance is instance and parent.name == name)
        )
        order, number = run.next_call(name) if tracked else (0, 0)
        call = Call(original, name, instance, owner, args, kwargs, self.hooks, run, order, number, depth, parent,
                    tracked, time.perf_counter())
        call.reading = self.reading
        return call

    def _pre(self, call: Call[RunOfCalls]) -> list[Any] | None:
        """What each handler's ``pre`` returned, for its ``post`` (None: every one returned
        None, as the pipeline's, the one ``pre`` of a metric's call); called while the call
        is marked as pypads' work, only for a site with a handler that has a ``pre``."""
        states: list[Any] | None = None
        for index, pre, options, depth in self._pre_phases:
            if depth < 0 or call.depth <= depth:  # the event's depth: what the logger sees
                try:
                    state = pre(call, options)
                    if state is not None:
                        if states is None:
                            states = [None] * len(self.handlers)
                        states[index] = state
                except PASSES_THROUGH_LOGGERS:
                    raise
                except BaseException as error:  # a logger must never break the user's call
                    call.run.logger_failed(self.handlers[index].logger.name, f"pre of {call.name}", error)
        return states

    def _post(self, call: Call[RunOfCalls], before: list[Any] | None) -> None:
        state = _thread
        state.busy = True  # invoke took it down for the original: down again is as it was
        try:
            for index, post, options, depth in self._post_phases:
                if depth < 0 or call.depth <= depth:
                    try:
                        post(call, None if before is None else before[index], options)
                    except PASSES_THROUGH_LOGGERS:
                        raise
                    except BaseException as error:  # a logger must never break the user's call
                        call.run.logger_failed(self.handlers[index].logger.name, f"post of {call.name}", error)
        finally:
            state.busy = False


def _encloses_same(parent: Call[RunOfCalls] | None, original: Callable[..., Any], instance: Any) -> bool:
    while parent is not None:
        if parent.function is original and parent.instance is instance:
            return True
        parent = parent.parent
    return False

