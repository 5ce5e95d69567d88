"""The logger contract: a small object with a pre and a post phase around a tracked call."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from pypads.core.call import Call
from pypads.core.errors import ConfigError

# The seed spells options as ``_pypads_<option>``; both spellings are accepted.
_SEED_PREFIX = "_pypads_"


def option_name(key: str) -> str:
    """The plain name of an option given as ``write_format`` or ``_pypads_write_format``."""
    return key[len(_SEED_PREFIX) :] if key.startswith(_SEED_PREFIX) else key


OptionKind = tuple[str, Callable[[Any], bool]]
"""What an option's value must be: its description (``a whole number >= 0``) and its test."""


def check_option_kinds(options: Mapping[str, Any], kinds: Mapping[str, OptionKind], where: Callable[[str], str]) -> None:
    """Raise a ConfigError for an option whose value is not of its kind in ``kinds``;
    ``where(option)`` says where the value was given."""
    for option, value in options.items():
        kind = kinds.get(option)
        if kind is not None and not kind[1](value):
            raise ConfigError(f"{where(option)}: {value!r} is not a valid {option} (expected {kind[0]})")


class Logger:
    """Base class of pypads loggers.

    Subclass it, declare the options you accept in ``defaults`` and override
    :meth:`pre`, :meth:`post` or both. Options come from the constructor
    (``Output(write_format="pickle")``) and are overridden per event by the event's
    ``with`` parameters in the config. A logger must not keep references to the call's
    arguments or result after ``post``: per-run state belongs in ``call.run.state(self)``.

    Exceptions a logger raises never reach the user's code: they become one
    :class:`~pypads.core.errors.LoggerWarning` and a ``pypads.failure.<name>`` tag on the run.
    """

    defaults: ClassVar[Mapping[str, Any]] = {}

    def __init__(self, **options: Any) -> None:
        self.options: dict[str, Any] = {**self.defaults, **self.check_options(options, f"{type(self).__name__}()")}

    @property
    def name(self) -> str:
        return type(self).__name__

    def check_options(self, options: Mapping[str, Any], where: str) -> dict[str, Any]:
        """Normalise option names and reject the ones this logger does not know."""
        normalised = {option_name(key): value for key, value in options.items()}
        unknown = sorted(set(normalised) - set(self.defaults))
        if unknown:
            known = ", ".join(sorted(self.defaults)) or "none"
            raise ConfigError(f"{where}: {self.name} has no option {unknown[0]!r} (its options: {known})")
        return normalised

    # The run is typed Any here: it sits on a floor above, and a logger names its type
    # (pypads.run.RunContext) in its own signatures, as it names Call[RunContext].
    def start(self, run: Any, options: Mapping[str, Any]) -> None:
        """Runs once when a run starts, for loggers whose event is on (most need nothing)."""

    def pre(self, call: Call[Any], options: Mapping[str, Any]) -> Any:
        """Runs before the original. Its return value is handed to :meth:`post`."""
        return None

    def post(self, call: Call[Any], before: Any, options: Mapping[str, Any]) -> None:
        """Runs after the original, which either set ``call.result`` or ``call.exception``."""

    def __repr__(self) -> str:
        shown = ", ".join(f"{key}={value!r}" for key, value in self.options.items())
        return f"{self.name}({shown})"


@dataclass(frozen=True)
class LoggerOnEvent:
    """A logger listening to an event, with the event's ``with`` options merged in."""

    event: str
    logger: Logger
    options: Mapping[str, Any]
    depth: int = -1
    """The deepest call the logger sees: 0 only the script's own calls, -1 every call
    (what scikit-learn calls inside the script's calls is not every logger's business)."""
    before: bool = True
    """Whether the logger does anything before the original runs (most only look after)."""
