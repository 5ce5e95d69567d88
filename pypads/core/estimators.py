"""An estimator's params, read the way scikit-learn reads them, without its per-call cost.

scikit-learn's ``get_params`` reads the ``__init__`` signature of the class on every call
(some 40 µs here), and a tracked fit needs the params several times: to log them, to
look for secrets in them, to write the model's text into the call record. The names
come from the class alone, so they are read once per class; the values are read from
the estimator each time, exactly as ``BaseEstimator.get_params`` does. A class with a
``get_params`` of its own (a ``Pipeline``, XGBoost's models) is asked as it asks to be.

Nothing here imports scikit-learn: its base class is recognised by the qualified names
of its two methods.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

# Classes are few, but a script could make them in a loop: the caches stay bounded.
_MOST_CLASSES = 1000
_NO_DEFAULT = inspect.Parameter.empty


def is_estimator(value: Any) -> bool:
    """Whether ``value`` has params to read: a ``get_params`` to call, and not a class."""
    return callable(getattr(value, "get_params", None)) and not isinstance(value, type)


def params(estimator: Any, deep: bool = False) -> dict[str, Any]:
    """``estimator.get_params(deep=deep)``, the same dict; the class's param names read
    once when its ``get_params`` is scikit-learn's own."""
    names = _param_names(type(estimator))
    if names is None or "get_params" in getattr(estimator, "__dict__", ()):  # its own, or one set on it
        return dict(estimator.get_params(deep=deep))
    found: dict[str, Any] = {}
    for name in names:
        value = getattr(estimator, name)
        if deep and hasattr(value, "get_params") and not isinstance(value, type):
            # As scikit-learn does: the inner estimator's get_params as it is called.
            inner = _nested(value)
            found.update((f"{name}__{key}", item) for key, item in inner.items())
        found[name] = value
    return found


def init_defaults(kind: type) -> dict[str, Any]:
    """The defaults of ``kind``'s ``__init__`` by param name (none for what has no
    signature), read once per class (again if its ``__init__`` is replaced): what a param
    left as it was holds."""
    init = getattr(kind, "__init__", None)
    known = _DEFAULTS.get(kind)
    if known is not None and known[0] is init:
        return known[1]
    try:
        signature = inspect.signature(kind)
    except (TypeError, ValueError):
        signature = None
    found = {} if signature is None else {
        name: param.default for name, param in signature.parameters.items() if param.default is not _NO_DEFAULT}
    if len(_DEFAULTS) < _MOST_CLASSES:
        _DEFAULTS[kind] = (init, found)
    return found


def is_default(value: Any, default: Any) -> bool:
    """Whether a param's ``value`` is its ``default``, as scikit-learn's repr decides it:
    the same object, or the same text for plain values and tuples of them (a NaN
    default counts as left as it was, ``(1, 1)`` as ``(1, 1)``, ``1`` not as ``1.0``).
    Anything else (arrays, estimators, objects whose text is their own) counts as set."""
    if value is default:
        return True
    kind = type(value)
    if kind is not type(default) or not (kind in _PLAIN or (kind is tuple and all(type(item) in _PLAIN for item in value))):
        return False
    return repr(value) == repr(default)


_PLAIN = frozenset({int, float, str, bool, bytes, type(None)})
# Per class: its __init__ when read, and the defaults of its params.
_DEFAULTS: dict[type, tuple[Any, dict[str, Any]]] = {}
# Per class: its __init__, get_params and _get_param_names when read, and its param
# names (None: the class reads its params its own way).
_NAMES: dict[type, tuple[Any, Any, Any, tuple[str, ...] | None]] = {}


def _nested(value: Any) -> dict[str, Any]:
    if _param_names(type(value)) is None:
        return dict(value.get_params())
    return params(value, deep=True)


def _param_names(kind: type) -> tuple[str, ...] | None:
    """The names scikit-learn's ``_get_param_names`` gives ``kind``, or None when the
    class does not use scikit-learn's own ``get_params``. Checked against the class's
    ``__init__`` and ``get_params`` of now, so a class patched later is read again."""
    init, get_params = getattr(kind, "__init__", None), getattr(kind, "get_params", None)
    name_reader = getattr(getattr(kind, "_get_param_names", None), "__func__", None)
    known = _NAMES.get(kind)
    if known is not None and known[0] is init and known[1] is get_params and known[2] is name_reader:
        return known[3]
    names: tuple[str, ...] | None = None
    if _is_scikit_learns(get_params, "get_params") and _is_scikit_learns(name_reader, "_get_param_names"):
        try:
            names = tuple(kind._get_param_names())  # type: ignore[attr-defined]
        except Exception:  # varargs in __init__: its get_params raises as it would untracked
            return None
    if len(_NAMES) < _MOST_CLASSES:
        _NAMES[kind] = (init, get_params, name_reader, names)
    return names


def _is_scikit_learns(function: Any, name: str) -> bool:
    return (getattr(function, "__module__", None) == "sklearn.base"
            and getattr(function, "__qualname__", None) == f"BaseEstimator.{name}")


def writes_scikit_learns_repr(value: Any) -> bool:
    """Whether ``value``'s repr is scikit-learn's estimator repr (not one of its own)."""
    return _is_scikit_learns(getattr(type(value), "__repr__", None), "__repr__")


def short_repr(estimator: Any, _depth: int = 0) -> str:
    """What scikit-learn's repr of ``estimator`` says, on one line: its class and the
    params set to other than their defaults, inner estimators the same way
    (``Pipeline(steps=[('scale', StandardScaler()), ('tree', DecisionTreeClassifier(max_depth=3))])``).
    scikit-learn's own pretty-prints, at 0.1 ms for a tree and 1.5 ms for a pipeline;
    a call record only needs what it says. All params are shown under scikit-learn's
    ``set_config(print_changed_only=False)``; lists, tuples and dicts show their first
    30 items, dicts sorted by key, as scikit-learn shows them. Whole: a text to search
    for secrets before it is cut (:func:`cut_in_the_middle`), as a cut could leave a
    secret's value without its name."""
    defaults = init_defaults(type(estimator))
    changed_only = _changed_only()
    shown = ", ".join(
        f"{name}={_value_repr(value, _depth + 1)}" for name, value in params(estimator).items()
        if not changed_only or name not in defaults or not is_default(value, defaults[name]))
    return f"{type(estimator).__name__}({shown})"


def cut_in_the_middle(text: str, length: int = 700) -> str:
    """``text`` cut in the middle past ``length`` characters, as scikit-learn cuts its
    repr (its ``N_CHAR_MAX``)."""
    if len(text) <= length:
        return text
    half = length // 2
    return f"{text[:half]}...{text[-half:]}"


_MOST_DEPTH = 8
_MOST_ITEMS = 30  # scikit-learn's repr shows as many items of a sequence or a dict


def _changed_only() -> bool:
    """scikit-learn's ``print_changed_only``, read where scikit-learn is imported already
    (an estimator of its kind is at hand), never importing it."""
    sklearn = sys.modules.get("sklearn")
    get_config = getattr(sklearn, "get_config", None)
    if get_config is None:
        return True
    return bool(get_config().get("print_changed_only", True))


def _value_repr(value: Any, depth: int) -> str:
    if depth > _MOST_DEPTH:
        return "..."
    if writes_scikit_learns_repr(value) and is_estimator(value):
        return short_repr(value, depth)
    kind = type(value)
    if kind is list or kind is tuple:
        items = [_value_repr(item, depth + 1) for item in value[:_MOST_ITEMS]]
        if len(value) > _MOST_ITEMS:
            items.append("...")
        if kind is list:
            return f"[{', '.join(items)}]"
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    if kind is dict:
        pairs = list(value.items())
        try:
            pairs.sort(key=lambda pair: pair[0])
        except TypeError:  # keys of kinds that do not compare: as they come
            pass
        shown = [f"{key!r}: {_value_repr(item, depth + 1)}" for key, item in pairs[:_MOST_ITEMS]]
        if len(pairs) > _MOST_ITEMS:
            shown.append("...")
        return "{" + ", ".join(shown) + "}"
    return repr(value)
