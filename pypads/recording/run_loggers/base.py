"""The contract of run loggers: run once when the run starts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pypads.core import pseudonym
from pypads.run import RunContext


@dataclass(frozen=True)
class RunSettings:
    """What run loggers need from the config."""

    env_allowlist: tuple[str, ...] = ()
    pseudonymize: bool = False
    salt: str = ""

    def identifying(self, value: str) -> str:
        """``value`` itself, or its pseudonym when the config asks for pseudonyms."""
        return pseudonym(value, self.salt) if self.pseudonymize and value else value


class RunLogger:
    """Base class of run loggers (``init_run_fns``). Override :meth:`log`; write
    through ``run.writer``. A failure is one warning and a ``pypads.failure.<name>`` tag.

    Run loggers run on a background thread (the script does not wait for them; the end
    of the run does), unless ``in_background`` is False: for those that must act
    before the script goes on, like capturing its console.
    """

    in_background: ClassVar[bool] = True

    @property
    def name(self) -> str:
        return type(self).__name__

    def log(self, run: RunContext, settings: RunSettings) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{self.name}()"
