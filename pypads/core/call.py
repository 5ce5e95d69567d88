"""A tracked call as loggers receive it: the function, its arguments, its place among the
run's calls, and (after the original ran) its result or exception."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from pypads.core.mapping.model import CallReading


class RunOfCalls(Protocol):
    """What the core asks of the run it tracks calls into. The run sits on a floor above
    (``pypads.run.RunContext``); a call only carries it to the loggers, which know it by
    its own type: ``Call[RunContext]``."""

    def next_call(self, name: str) -> tuple[int, int]: ...

    def logger_failed(self, logger_name: str, where: str, error: BaseException) -> None: ...


RunT = TypeVar("RunT", bound=RunOfCalls)


@dataclass(eq=False, slots=True)  # slots: a call is made per tracked call, and read field by field
class Call(Generic[RunT]):
    """One call of a tracked function or method, as loggers receive it; ``RunT`` is the
    type of the run it is tracked into."""

    function: Callable[..., Any]
    """The original (unpatched) function."""
    name: str
    """A readable qualified name: ``DecisionTreeClassifier.fit`` or ``accuracy_score``."""
    instance: Any
    """The object a method was called on (``None`` for functions and static methods)."""
    owner: Any
    """The class of ``instance``, or the class a classmethod was called on (``None`` for functions)."""
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    hooks: frozenset[str]
    run: RunT
    order: int
    """Position of this call among all tracked calls of the run (from 1)."""
    number: int
    """Position of this call among the run's calls of the same ``name`` (from 1)."""
    depth: int
    """How many tracked calls enclose this one (0 for a call made by user code)."""
    parent: Call[RunT] | None
    tracked: bool = True
    """False for a call the recursion rules leave to its enclosing call: no logger sees it."""
    started: float = field(default_factory=time.perf_counter)
    result: Any = None
    exception: BaseException | None = None
    duration: float | None = None
    reading: CallReading | None = None
    """What the mapping file says to read of this call (a native ``train``'s params,
    model and training curves), if it says."""

    @property
    def outermost(self) -> Call[RunT]:
        """The script's own call this one was made inside (itself at depth 0)."""
        call = self
        while call.parent is not None:
            call = call.parent
        return call

    @property
    def folder(self) -> str:
        """The artifact folder of this call: readable, unique and in call order."""
        return f"calls/{self.order:04d}_{self.name}"
