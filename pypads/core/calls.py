"""The tracked call: what happens between a patched attribute being called and its return.

A :class:`CallSite` belongs to one patched attribute. It runs the original exactly once
with the caller's arguments and, while a run is being tracked, surrounds it with the
pre and post phases of the loggers its hooks' events name. Exceptions of the original
reach the caller unchanged; exceptions of loggers never do (see ``RunContext``).
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from pypads.core.call import Call
from pypads.core.errors import PASSES_THROUGH_LOGGERS
from pypads.core.logger import LoggerOnEvent

if TYPE_CHECKING:  # the run sits on a floor above: the core only hands it on
    from pypads.run.context import RunContext


class Session:
    """The live switches that every call site consults: the run and the recursion rules.

    ``run`` is ``None`` outside a run; then every patched call is a plain pass-through.
    """

    def __init__(self, recursion_depth: int = -1, recursion_identity: bool = False) -> None:
        self.run: RunContext | None = None
        self.recursion_depth = recursion_depth
        self.recursion_identity = recursion_identity


# The session of the PyPads() in charge: patches are process-wide, so one at a time.
_tracking: Session | None = None


def tracked_run() -> RunContext | None:
    """The run calls are tracked into in this process, if any: for code outside a
    tracked call (``callmonitor.intercept``). It is the session's, the one pointer."""
    session = _tracking
    return session.run if session is not None else None


def set_tracking_session(session: Session | None) -> None:
    """Make ``session`` the one :func:`tracked_run` reads (None: no PyPads() in charge)."""
    global _tracking
    _tracking = session


# The innermost tracked call of the current thread or asyncio task. Each context has
# its own, so threads and tasks never see each other's calls.
_current_call: contextvars.ContextVar[Call | None] = contextvars.ContextVar("pypads_call", default=None)
# Set while pypads' own code runs (the loggers, the call's bookkeeping), so that tracked
# code it calls, or that a signal handler interrupting it calls, is not tracked again.
_in_pypads: contextvars.ContextVar[bool] = contextvars.ContextVar("pypads_busy", default=False)


def inside_pypads() -> bool:
    """Whether pypads' own code is running in this thread or task (or was interrupted
    there by a signal handler): code called now must run untracked."""
    return _in_pypads.get()


@contextlib.contextmanager
def pypads_at_work() -> Iterator[None]:
    """Mark pypads' own work, so that whatever it calls, or a signal handler that
    interrupts it calls, runs untracked instead of waiting for a lock held right here."""
    token = _in_pypads.set(True)
    try:
        yield
    finally:
        _in_pypads.reset(token)


def current_call() -> Call | None:
    """The innermost tracked call that is running in this thread or task, if any."""
    return _current_call.get()


class CallSite:
    """The tracking of one patched attribute (``BaseDecisionTree.fit``, ``accuracy_score``…)."""

    __slots__ = ("session", "attribute", "hooks", "handlers", "_pre_phases", "_post_phases", "bound_to", "key")

    def __init__(
        self,
        session: Session,
        attribute: str,
        hooks: frozenset[str],
        handlers: tuple[LoggerOnEvent, ...],
        bound_to: str,
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

    def invoke(self, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        run = self.session.run
        if run is None or not self.handlers or _in_pypads.get():
            return original(*args, **kwargs)
        # Marked as pypads' own work, like the loggers' phases: a signal handler that
        # interrupts it here and calls tracked code runs that code untracked, instead of
        # waiting for a lock this very thread holds.
        busy = _in_pypads.set(True)
        try:
            call = self._begin(run, original, args, kwargs)
        finally:
            _in_pypads.reset(busy)
        token = _current_call.set(call)
        try:
            if not call.tracked:
                return original(*args, **kwargs)
            before = self._pre(call)
            call.started = time.perf_counter()  # the duration is the original's alone
            try:
                call.result = original(*args, **kwargs)
            except BaseException as error:
                call.exception = error
                call.duration = time.perf_counter() - call.started
                self._post(call, before)
                raise
            call.duration = time.perf_counter() - call.started
            self._post(call, before)
            return call.result
        finally:
            _current_call.reset(token)

    def _begin(self, run: RunContext, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Call:
        """The call, pushed on the stack even when the recursion rules leave it untracked,
        so that the calls it makes see it as their parent."""
        parent = _current_call.get()
        depth = 0 if parent is None else parent.depth + 1
        instance, owner = self._receiver(original, args)
        name = f"{_display_owner(instance, owner)}.{self.attribute}" if owner is not None else self.attribute
        tracked = not (
            0 <= self.session.recursion_depth < depth
            or (self.session.recursion_identity and _encloses_same(parent, original, instance))
            # a subclass's fit calling super().fit(): one user call, tracked once
            or (parent is not None and instance is not None and parent.instance is instance and parent.name == name)
        )
        order, number = run.next_call(name) if tracked else (0, 0)
        return Call(
            function=original,
            name=name,
            instance=instance,
            owner=owner,
            args=args,
            kwargs=kwargs,
            hooks=self.hooks,
            run=run,
            order=order,
            number=number,
            depth=depth,
            parent=parent,
            tracked=tracked,
        )

    def _receiver(self, original: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, Any]:
        if self.bound_to == "instance" and args:
            return args[0], type(args[0])
        if self.bound_to == "class" and args:
            return None, args[0]
        return None, None

    def _pre(self, call: Call) -> list[Any] | None:
        """What each handler's ``pre`` returned, for its ``post`` (None: no handler has a
        ``pre``, as for a metric, whose every call comes through here)."""
        if not self._pre_phases:
            return None
        token = _in_pypads.set(True)
        try:
            states: list[Any] = [None] * len(self.handlers)
            for index, pre, options, depth in self._pre_phases:
                if depth < 0 or call.depth <= depth:  # the event's depth: what the logger sees
                    try:
                        states[index] = pre(call, options)
                    except PASSES_THROUGH_LOGGERS:
                        raise
                    except BaseException as error:  # a logger must never break the user's call
                        call.run.logger_failed(self.handlers[index].logger.name, f"pre of {call.name}", error)
            return states
        finally:
            _in_pypads.reset(token)

    def _post(self, call: Call, before: list[Any] | None) -> None:
        token = _in_pypads.set(True)
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
            _in_pypads.reset(token)


def _encloses_same(parent: Call | None, original: Callable[..., Any], instance: Any) -> bool:
    while parent is not None:
        if parent.function is original and parent.instance is instance:
            return True
        parent = parent.parent
    return False


def _display_owner(instance: Any, owner: Any) -> str:
    return type(instance).__name__ if instance is not None else getattr(owner, "__name__", str(owner))
