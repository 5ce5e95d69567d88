"""Parameters: an estimator's hyper-parameters as MLflow params."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pypads.calls import Call
from pypads.loggers.base import Logger

# MLflow rejects longer param values.
MAX_PARAM_LENGTH = 6000


class Parameters(Logger):
    """Logs ``instance.get_params(deep=False)`` as params named ``<Class>.<param>``.

    MLflow refuses to change a param once logged, so a later call on the same class
    with other values gets its own prefix ``<Class>_1``, ``<Class>_2``… Repeating
    values already logged adds nothing.
    """

    def pre(self, call: Call, options: Mapping[str, Any]) -> None:
        get_params = getattr(call.instance, "get_params", None)
        if not callable(get_params):
            return
        params = {key: _as_text(value) for key, value in get_params(deep=False).items()}
        seen: list[dict[str, str]] = call.run.state(self).setdefault(type(call.instance).__name__, [])
        if params in seen:
            return
        seen.append(params)
        prefix = type(call.instance).__name__ if len(seen) == 1 else f"{type(call.instance).__name__}_{len(seen) - 1}"
        call.run.writer.log_params({f"{prefix}.{key}": value for key, value in params.items()})


def _as_text(value: Any) -> str:
    text = str(value)
    return text if len(text) <= MAX_PARAM_LENGTH else text[: MAX_PARAM_LENGTH - 3] + "..."
