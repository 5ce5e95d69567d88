"""Parameters: an estimator's hyper-parameters as MLflow params."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pypads.calls import Call
from pypads.loggers.base import Logger
from pypads.privacy import redact_params

# MLflow rejects longer param values.
MAX_PARAM_LENGTH = 6000


class Parameters(Logger):
    """Logs ``instance.get_params(deep=False)`` as params named ``<Class>.<param>``.

    MLflow refuses to change a param once logged, so a later call on the same class
    with other values gets its own prefix ``<Class>_1``, ``<Class>_2``… Repeating
    values already logged adds nothing. Array values are logged as their type, shape
    and dtype: a data-dependent array (e.g. a precomputed Gram matrix passed to inner
    estimators) would otherwise make every call a new variant. At most
    ``max_variants`` variants are logged per class; then the tag
    ``pypads.parameters.<Class>`` says that later ones were left out. The value of a
    param named like a secret (``api_token``, ``password``…) is logged as ``***``, and
    URL credentials in other values are hidden (see :mod:`pypads.privacy`).
    """

    defaults = {"max_variants": 100}

    def pre(self, call: Call, options: Mapping[str, Any]) -> None:
        get_params = getattr(call.instance, "get_params", None)
        if not callable(get_params):
            return
        params = redact_params({key: _as_text(value) for key, value in get_params(deep=False).items()})
        class_name = type(call.instance).__name__
        variants: dict[frozenset[tuple[str, str]], int] = call.run.state(self).setdefault(class_name, {})
        key = frozenset(params.items())
        if key in variants:
            return
        if len(variants) >= options["max_variants"]:
            if len(variants) == options["max_variants"]:
                variants[frozenset()] = -1  # remember that the tag is set
                call.run.writer.set_tag(
                    f"pypads.parameters.{class_name}",
                    f"more than {options['max_variants']} parameter variants: later ones are not logged",
                )
            return
        variants[key] = index = len(variants)
        prefix = class_name if index == 0 else f"{class_name}_{index}"
        call.run.writer.log_params({f"{prefix}.{name}": value for name, value in params.items()})


def _as_text(value: Any) -> str:
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if isinstance(shape, tuple) and dtype is not None:
        return f"<{type(value).__name__} shape={shape} dtype={dtype}>"
    text = str(value)
    return text if len(text) <= MAX_PARAM_LENGTH else text[: MAX_PARAM_LENGTH - 3] + "..."
